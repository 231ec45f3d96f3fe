"""Schema sync: the ``ToolSchemaSync`` dynamic provider that lists a tool's schema at deploy
time, the comparison of schemas (breaking or compatible), the CI lock file, and access to
in-cluster tools through the API server's proxy."""
