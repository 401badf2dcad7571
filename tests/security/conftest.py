from _sec_support import serve  # noqa: F401  (the fixture)
