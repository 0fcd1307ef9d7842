"""One operation, one id: the OpenAPI schema of `memory-sim serve` (with the inspector mounted, as on loopback)
gives every operation its own operationId, and building it warns of no duplicate."""

from __future__ import annotations

import warnings
from collections import Counter
from pathlib import Path

from memory_sim.builder.server import build_server_app
from memory_sim.inspector import Access, Folder, mount
from memory_sim.settings import Settings


def test_every_operation_has_its_own_id_and_no_warning(tmp_path: Path) -> None:
    app = build_server_app(tmp_path / "accounts", "tok")
    mount(app, Folder(Settings.load(environ={}, data_dir=tmp_path)), Access())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        spec = app.openapi()
    assert not [str(w.message) for w in caught if "Operation ID" in str(w.message)]
    ids = Counter(op["operationId"] for path in spec["paths"].values() for op in path.values() if "operationId" in op)
    assert len(ids) > 20 and [i for i, n in ids.items() if n > 1] == []
    binding = spec["paths"]["/remote-proxy/{account_id}/vectorize/{name}"]  # the Worker plugin's
    assert {binding["get"]["operationId"], binding["post"]["operationId"]} == {"vectorize_binding_get",
                                                                                "vectorize_binding_post"}
