"""Generated ``lf.a2a.v1`` protobuf and gRPC modules (do not edit: see ``.._protoc``)."""
