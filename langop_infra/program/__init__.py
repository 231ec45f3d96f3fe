"""Pulumi programs made of the components: the stack program that reads
``stacks/Pulumi.<env>.yaml`` (``stack.main``), and the component package served to other
languages (``package.serve``)."""
