"""What runs a conversation, and what the actors host.

The actors and the conversation loop: :mod:`.coordinator` (the coordinator actor),
:mod:`.hosts` (the agent and user-simulator hosts and their typed requests),
:mod:`.conversation` (one conversation's loop), :mod:`.session` (one side of one
conversation), :mod:`.policies` (who speaks for a side), :mod:`.records` (a finished
conversation's records), :mod:`.unit` (the work unit), :mod:`.failures` (the one
classification of exceptions), :mod:`.heap` (long-lived actors and the collector).

What they host, one package each: :mod:`.llm` (model access, and whether a model can be
used), :mod:`.judge` (judges), :mod:`.quota` (one rate limit per provider model),
:mod:`.serving` (Ray Serve deployments), :mod:`.voice` (voice mode) and :mod:`.audit`
(who failed).

Nothing is imported here: ``import tauray.actors.X`` loads only what X needs.
"""
