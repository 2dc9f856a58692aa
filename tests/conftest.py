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
