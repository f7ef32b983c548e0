"""Who acts: the Ray actors (coordinator, agent / user-simulator hosts) and what runs
inside one conversation (session, views, reference policies, failure classes), with
sub-packages for model access (:mod:`.llm`), the judge (:mod:`.judge`), the local test
endpoint (:mod:`.endpoint`) and served models (:mod:`.serving`).

Nothing is imported here: ``import tauray.actors.X`` loads only what X needs."""
