"""The Pulumi components ``LanguageTool``, ``LanguageAgent``, ``LanguageModel`` and
``LanguageCluster``: wiring only. Each validates its input, asks the builders for object specs
and registers them as children."""
