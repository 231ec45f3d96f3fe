"""The input: pydantic specs of tools, agents, models and clusters, and the whole-document
checks run on them once, before anything is registered (``validation.parse_*``).

No Pulumi here. Field types live in ``fields``, pod settings in ``pod``, network peers in
``network``; one module per concept (``tool``, ``agent``, ``model``, ``cluster``); generated
names and reserved paths in ``names``; document checks in the remaining modules.
"""
