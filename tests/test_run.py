from mantra_env.run import main


def test_main_job_grades_the_running_example(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main([]) == 0
    out = capsys.readouterr().out
    assert "fig1-case1 / compliant: PASS (4/4 checks)" in out
    assert "fig1-case1 / premature write: FAIL (2/4 checks)" in out
    assert "FAIL [ordering_violation]" in out
    assert "fig2" not in out
    assert "graded 4 traces" in out
