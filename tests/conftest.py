"""Shared pytest fixtures."""

from __future__ import annotations

import pytest


@pytest.fixture
def local_judge_server():
    """A running :class:`evallab.testing.LocalJudgeServer` (thread mode, 127.0.0.1, free port) answering with a
    :class:`~evallab.testing.SimulatedJudge` (seed 0, pass_rate 0.4, pass_only_inflation 0.5, position_bias 0.2);
    stopped after the test. Use ``server.base_url`` as a notebook's ``judge_base_url``."""
    from evallab.testing import LocalJudgeServer, SimulatedJudge

    sim = SimulatedJudge(seed=0, pass_rate=0.4, pass_only_inflation=0.5, position_bias=0.2)
    with LocalJudgeServer(sim=sim) as srv:
        yield srv


@pytest.fixture(autouse=True)
def _fresh_learnt_limits():
    """Each test starts with no adaptive limit learnt in the process (a module-scoped server keeps its URL from
    one test to the next, and a judge on it would start from the previous test's limit)."""
    from evallab.judges import OpenAICompatibleJudge

    OpenAICompatibleJudge.forget_learnt_limits()
    yield
    OpenAICompatibleJudge.forget_learnt_limits()


@pytest.fixture(autouse=True)
def _close_figures():
    """Figures a test made (section functions return open figures for the report to show) are closed after it."""
    yield
    import sys

    plt = sys.modules.get("matplotlib.pyplot")
    if plt is not None:
        plt.close("all")


# ------------------------------------------------------------------ the bundled keryx pack, shared by the tests of
# scenarios (tests/skills/) and of report 06's sections (tests/reporting/): loaded once per module that asks
@pytest.fixture(scope="module")
def specs():
    """The bundled keryx pack's scenarios (``data/keryx``: :func:`evallab.skills.load_tree`)."""
    from evallab import skills
    from evallab.paths import data_dir

    return skills.load_tree(data_dir("keryx"))


@pytest.fixture(scope="module")
def recs():
    """The bundled keryx pack's judge recordings."""
    from evallab.judges import load_recordings
    from evallab.paths import data_dir

    return load_recordings(data_dir("keryx") / "judge-recordings")


@pytest.fixture(scope="module")
def ag(specs, recs):
    """The AG matrix of the bundled recordings (:func:`evallab.experiments.check_recordings`)."""
    from evallab.experiments import check_recordings

    return check_recordings(specs, recs)


@pytest.fixture(scope="module")
def reports():
    """The bundled go/governance ``eval.json`` report."""
    from evallab import skills
    from evallab.paths import data_dir

    return skills.load_eval_report(data_dir("keryx") / "stacks/go/governance/eval.json")
