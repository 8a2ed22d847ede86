"""The OpenAPI document says what the server takes: its bounds, its nullability, resume's fields."""

from __future__ import annotations

import json
from typing import Any

from suture.config.settings import load_settings
from suture.contracts.quiz_params import MAX_QUESTIONS
from suture.workers.api.app import create_app


def served_schemas() -> dict[str, Any]:
    app = create_app(load_settings(overrides={"redis_url": "redis://127.0.0.1:9/0"}))  # never connected
    return dict(app.openapi()["components"]["schemas"])


def test_the_document_bounds_and_nullability_are_those_the_server_enforces() -> None:
    # Given the document `suture serve` serves
    schemas = served_schemas()

    # Then questions are bounded as admission bounds them, in JSON and multipart bodies alike
    upload, request = schemas["JobUpload"]["properties"], schemas["JobRequest"]["properties"]
    assert upload["questions"]["maximum"] == MAX_QUESTIONS
    assert {"type": "null"} not in upload["questions"].get("anyOf", [])  # a form field cannot be null
    assert request["questions"]["anyOf"][0]["maximum"] == MAX_QUESTIONS  # JSON may send null: not given
    # And no optional field says `default: null` (code generators take it for a required field)
    assert '"default": null' not in json.dumps(schemas)
    # And resume takes the parts to regenerate and a new callback, as the CLI does
    resume = schemas["ResumeRequest"]["properties"]
    assert resume["targets"]["items"] == {"type": "string"} and "callback" in resume
    assert schemas["ResumeRequest"]["required"] == ["feedback"]
    # And a job's view holds its callback's delivery
    assert "callback" in schemas["JobView"]["properties"]
    assert set(schemas["CallbackDelivery"]["properties"]) == {
        "state",
        "attempts",
        "last_status",
        "last_error",
    }
