"""Your own prompt as a Jinja2 template (issue 29, item 1): the built-in prompts as templates render exactly the text
of the existing builders; a user's template carries its name and sha256 on every request; the sandbox refuses a
template that reaches for Python internals, in one line."""

from __future__ import annotations

import hashlib

import pytest

from evallab.errors import DataError
from evallab.judges._prompts import Anchor, build_pairwise, build_pointwise
from evallab.judges._templates import (
    builtin_template,
    load_prompt_template,
    render_pairwise,
    render_pointwise,
)

ANCHORS = (Anchor("an example with ```fences```", "1"), Anchor("another", "2"))


@pytest.mark.parametrize("name", ["vanilla", "rules"])
@pytest.mark.parametrize("order", ["ab", "ba"])
@pytest.mark.parametrize("anchors", [(), ANCHORS])
def test_builtin_pairwise_template_is_the_builder(name, order, anchors):
    want = build_pairwise("Do X", "out one", "out two", order=order, anchors=anchors, prompt=name)
    got = render_pairwise(builtin_template(name), "Do X", "out one", "out two", order=order, anchors=anchors)
    assert [(m.role, m.content) for m in got.messages] == [(m.role, m.content) for m in want.messages]
    assert got.prompt_version == want.prompt_version and got.metadata["order"] == order


@pytest.mark.parametrize("fails", [(), ("f1", "f2")])
@pytest.mark.parametrize("anchors", [(), (Anchor("good", "pass"), Anchor("bad", "fail"))])
def test_builtin_pointwise_template_is_the_builder(fails, anchors):
    kw = dict(rubric=" A rubric. ", pass_criteria="p1\np2", fail_criteria=fails, answer="the answer", anchors=anchors)
    want, got = build_pointwise(**kw), render_pointwise(builtin_template("pointwise"), **kw)
    assert [m.content for m in got.messages] == [m.content for m in want.messages]


def test_a_users_template_is_its_own_design_cell(tmp_path):
    text = ('{% set kind = "pairwise" %}{% block system %}Judge strictly. {{ rubric }}{% endblock %}'
            "{% block user %}Q: {{ instruction }}\nA: {{ output_a }}\nB: {{ output_b }}\n{{ reply_format }}"
            "{% endblock %}")
    p = tmp_path / "strict.j2"
    p.write_text(text, encoding="utf-8")
    t = load_prompt_template(p)
    sha = hashlib.sha256(text.encode()).hexdigest()
    assert (t.name, t.kind, t.sha256, t.prompt_version) == ("strict", "pairwise", sha, f"template:strict:{sha}")
    r = render_pairwise(t, "Q?", "one", "two", order="ba", rubric="Be terse.")
    assert r.messages[0].content == "Judge strictly. Be terse."
    assert r.messages[1].content.startswith("Q: Q?\nA: two\nB: one\n")  # shown order: output 2 first
    assert r.metadata["prompt"] == "strict" and r.metadata["prompt_sha256"] == sha
    p.write_text(text + " ", encoding="utf-8")  # an edited template is another prompt
    assert load_prompt_template(p).prompt_version != t.prompt_version


@pytest.mark.parametrize("body", ["{{ ''.__class__.__mro__[1].__subclasses__() }}",
                                  "{{ instruction.__class__.__init__.__globals__ }}",
                                  "{{ cycler.__init__.__globals__.os }}"])
def test_the_sandbox_refuses_python_internals_in_one_line(tmp_path, body):
    p = tmp_path / "evil.j2"
    p.write_text('{% set kind = "pairwise" %}{% block system %}x{% endblock %}{% block user %}' + body
                 + "{% endblock %}", encoding="utf-8")
    with pytest.raises(DataError) as ei:
        render_pairwise(load_prompt_template(p), "i", "a", "b")
    msg = str(ei.value)
    assert "evil.j2" in msg and len(msg.splitlines()) == 1
    assert "refused by the sandbox" in msg or "undefined variable" in msg


def test_bad_templates_one_line(tmp_path):
    cases = {"nokind.j2": ("{% block system %}x{% endblock %}{% block user %}y{% endblock %}", "declares kind None"),
             "noblock.j2": ('{% set kind = "pointwise" %}{% block system %}x{% endblock %}', "has no block 'user'"),
             "syntax.j2": ('{% set kind = "pairwise" %}{% block system %}{{ x {% endblock %}', "not a valid Jinja2"),
             }
    for name, (text, want) in cases.items():
        p = tmp_path / name
        p.write_text(text, encoding="utf-8")
        with pytest.raises(DataError, match=want):
            load_prompt_template(p)
    p = tmp_path / "undef.j2"
    p.write_text('{% set kind = "pairwise" %}{% block system %}{{ nope }}{% endblock %}{% block user %}u'
                 "{% endblock %}", encoding="utf-8")
    with pytest.raises(DataError, match="undefined variable .*'nope' is undefined"):
        render_pairwise(load_prompt_template(p), "i", "a", "b")
    with pytest.raises(DataError, match="is a pairwise template; expected a pointwise one"):
        render_pointwise(load_prompt_template(p), rubric="r", pass_criteria="p", answer="a")
    with pytest.raises(DataError, match="no built-in prompt 'fancy'"):
        builtin_template("fancy")
