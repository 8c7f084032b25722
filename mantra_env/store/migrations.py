"""Ordered DuckDB migrations, and the views of the latest schema. Never edit a released migration: append a new one
(and, when it changes a view, update :data:`VIEWS`)."""

from __future__ import annotations

# 2: read-side views (readers and notebooks use these, not the tables).
_VIEWS_2 = """
CREATE VIEW v_episodes AS
SELECT e.*, r.model, r.agent, r.suite, r.name AS run_name,
       e.status <> 'error' AS scored,
       e.steps = 0 AND e.status <> 'error' AS empty_trace
FROM episodes e JOIN runs r USING (run_id);

CREATE VIEW v_task_counts AS
SELECT run_id, model, suite, case_id,
       count(*) FILTER (WHERE scored) AS attempts,
       count(*) FILTER (WHERE status = 'passed') AS passed,
       count(*) FILTER (WHERE status = 'error') AS errors
FROM v_episodes GROUP BY run_id, model, suite, case_id;

CREATE VIEW v_first_steps AS
SELECT s.run_id, s.case_id, s.attempt,
       min(s.step) FILTER (WHERE s.kind = 'read') AS first_read,
       min(s.step) FILTER (WHERE s.kind = 'write') AS first_write,
       count(*) FILTER (WHERE s.kind = 'read') AS read_calls,
       count(*) AS calls
FROM steps s GROUP BY s.run_id, s.case_id, s.attempt;

CREATE VIEW v_attempt_behaviour AS
SELECT e.run_id, e.model, e.suite, e.case_id, e.attempt, e.status, e.scored, e.empty_trace,
       coalesce(f.first_write < coalesce(f.first_read, 2147483647), false) AS premature_write,
       coalesce(f.read_calls, 0) AS read_calls, e.steps, e.input_tokens + e.output_tokens AS tokens
FROM v_episodes e LEFT JOIN v_first_steps f USING (run_id, case_id, attempt);

CREATE VIEW v_failed_checks AS
SELECT c.*, r.model, r.suite,
       json_extract_string(c.evidence, '$.explanation') AS explanation
FROM check_verdicts c JOIN runs r USING (run_id)
WHERE NOT c.passed;
"""

# 4: the views of migration 2, with v_episodes giving the run's grader version and whether the episode was graded
# for writes, and v_unrequested_writes: one row per unrequested write (failure category ``unrequested_write``,
# charged to that call's step).
_VIEWS_4 = (
    """
CREATE VIEW v_episodes AS
SELECT e.*, r.model, r.agent, r.suite, r.name AS run_name, coalesce(r.grader_version, 1) AS grader_version,
       e.status <> 'error' AS scored,
       e.steps = 0 AND e.status <> 'error' AS empty_trace,
       e.unrequested_writes IS NOT NULL AS graded_for_writes
FROM episodes e JOIN runs r USING (run_id);
"""
    + _VIEWS_2[_VIEWS_2.index("CREATE VIEW v_task_counts") :]
    + """
CREATE VIEW v_unrequested_writes AS
SELECT e.run_id, e.case_id, e.attempt, r.model, r.suite, 'unrequested_write' AS category,
       CAST(json_extract(w.value, '$.step') AS INTEGER) AS step,
       json_extract_string(w.value, '$.tool') AS tool,
       json_extract(w.value, '$.args') AS arguments
FROM episodes e JOIN runs r USING (run_id), json_each(e.unrequested_writes) w
WHERE e.unrequested_writes IS NOT NULL;
"""
)

MIGRATIONS: tuple[str, ...] = (
    # 1: the rollout tables.
    """
    CREATE TABLE runs (
        run_id VARCHAR PRIMARY KEY,
        name VARCHAR NOT NULL,
        suite VARCHAR NOT NULL,
        suite_version INTEGER NOT NULL,
        model VARCHAR NOT NULL,
        agent VARCHAR NOT NULL,
        code_version VARCHAR NOT NULL,
        config JSON NOT NULL,
        created_at TIMESTAMPTZ NOT NULL
    );
    CREATE TABLE episodes (
        run_id VARCHAR NOT NULL,
        case_id VARCHAR NOT NULL,
        attempt INTEGER NOT NULL,
        status VARCHAR NOT NULL CHECK (status IN ('passed', 'failed', 'error')),
        reward DOUBLE,
        checks_passed INTEGER,
        checks_total INTEGER,
        steps INTEGER NOT NULL,
        input_tokens BIGINT NOT NULL,
        output_tokens BIGINT NOT NULL,
        model_calls INTEGER NOT NULL,
        latency_s DOUBLE NOT NULL,
        error_kind VARCHAR,
        error VARCHAR,
        final_answer VARCHAR,
        verdict JSON,
        messages JSON NOT NULL,
        started_at TIMESTAMPTZ NOT NULL,
        finished_at TIMESTAMPTZ NOT NULL,
        PRIMARY KEY (run_id, case_id, attempt)
    );
    CREATE TABLE steps (
        run_id VARCHAR NOT NULL,
        case_id VARCHAR NOT NULL,
        attempt INTEGER NOT NULL,
        step INTEGER NOT NULL,
        tool VARCHAR NOT NULL,
        kind VARCHAR,
        arguments JSON NOT NULL,
        raw_arguments VARCHAR,
        result JSON,
        error_code VARCHAR,
        error_message VARCHAR,
        latency_s DOUBLE,
        PRIMARY KEY (run_id, case_id, attempt, step)
    );
    CREATE TABLE check_verdicts (
        run_id VARCHAR NOT NULL,
        case_id VARCHAR NOT NULL,
        attempt INTEGER NOT NULL,
        check_id VARCHAR NOT NULL,
        check_text VARCHAR NOT NULL,
        passed BOOLEAN NOT NULL,
        category VARCHAR,
        evidence JSON NOT NULL,
        PRIMARY KEY (run_id, case_id, attempt, check_id)
    );
    """,
    _VIEWS_2,
    # 3: what a resumed run must match: the content hash of its suite and domain, and the settings that decide
    # its episodes (NULL for runs stored before).
    """
    ALTER TABLE runs ADD COLUMN suite_hash VARCHAR;
    ALTER TABLE runs ADD COLUMN settings JSON;
    """,
    # 4: the verdict's two parts apart (issue 31). Each run records the grader that scored it (1: the checks
    # alone, every run stored before). Each episode keeps whether every check passed (``all_checks_passed``; the
    # ``status`` stays the combined verdict) and its unrequested writes, a JSON list of {step, tool, args}: NULL is
    # "not graded for writes" (every episode stored before, and a case without a stored oracle plan), never "none".
    # No column default: the store writes every run's version from its RunRecord, so none is claimed silently.
    """
    ALTER TABLE runs ADD COLUMN grader_version INTEGER;
    UPDATE runs SET grader_version = 1;
    ALTER TABLE episodes ADD COLUMN all_checks_passed BOOLEAN;
    ALTER TABLE episodes ADD COLUMN unrequested_writes JSON;
    UPDATE episodes SET all_checks_passed = checks_passed = checks_total WHERE checks_total IS NOT NULL;
    """
    + _VIEWS_4.replace("CREATE VIEW", "CREATE OR REPLACE VIEW"),
)

VIEWS = _VIEWS_4.replace("CREATE VIEW", "CREATE OR REPLACE VIEW")
"""The views of the latest schema: recreated on every open for writing, and created as temporary views (which
shadow the file's own) on every open for reading, so that no view stored in a file is trusted."""
