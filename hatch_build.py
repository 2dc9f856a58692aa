"""Build hook (hatchling): the regular wheel ships the checkout's bundled files inside the package, under
``evallab/_bundled/`` — the data with their SOURCE.md and LICENSE files, the notebooks, the batch files — where
``evallab.paths`` finds them with ``importlib.resources``. An editable install (``pip install -e .``, ``make venv``)
gets none of them: it reads the checkout's own folders."""

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

BUNDLED = ("data", "notebooks", "reports.yaml", "sweeps.yaml")


class BundleHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict) -> None:
        if self.target_name == "wheel" and version == "standard":
            build_data["force_include"].update({p: f"evallab/_bundled/{p}" for p in BUNDLED})
