"""Human review of a generation run (paper: the human fallback of the repair loop): ``mantra review RUN_DIR``.

:mod:`generators.review.state` holds the reviewed artifacts and every change (pure functions, atomic writes
that refuse stale revisions), :mod:`generators.review.run` reads the run directory, :mod:`generators.review.app`
is the local web app. The pipeline starts a re-validation from the reviewed artifacts with their edited parts
locked, and the export takes the reviewer's decisions (``python -m generators.run --resume RUN_DIR --from-stage
export`` after a review).
"""
