"""Human review of a generation run (paper: the human fallback of the repair loop): ``mantra review RUN_DIR``.

:mod:`mantra_env.generators.review.state` holds the reviewed artifacts and every change (pure functions, atomic writes
that refuse stale revisions), :mod:`mantra_env.generators.review.run` reads the run directory,
:mod:`mantra_env.generators.review.app` is the local web app. The pipeline starts a re-validation from the reviewed
artifacts with their edited parts locked, and the export takes the reviewer's decisions (``python -m
mantra_env.generators.run --resume RUN_DIR --from-stage export`` after a review).
"""
