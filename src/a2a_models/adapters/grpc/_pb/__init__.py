"""Generated protobuf and gRPC modules (do not edit: see ``.._protoc``): ``a2a_pb2*`` is
1.0's ``lf.a2a.v1``, ``a2a_v03_pb2*`` 0.3's ``a2a.v1``."""
