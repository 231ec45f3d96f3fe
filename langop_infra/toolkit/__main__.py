"""``python -m langop_infra.toolkit``: serve the global registry (the built-in tools)."""

from langop_infra.toolkit import serve

if __name__ == "__main__":
    serve()
