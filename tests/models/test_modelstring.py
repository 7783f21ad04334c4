"""A model string is parsed once into a ModelSpec that holds no credentials."""

from dataclasses import asdict

import pytest

from memlens.errors import MemlensError
from memlens.models import ModelSpec, model_spec
from memlens.models.modelstring import parse_model_string, public_model_string

SECRET = "sk-SECRET-7f1e"


@pytest.mark.parametrize("string", [
    f"openai:qwen@http://user:{SECRET}@127.0.0.1:8000/v1",
    f"openai:qwen@http://127.0.0.1:8000/v1/?api_key={SECRET}",
    f"anthropic:claude@https://{SECRET}@api.example.com/v1",
])
def test_a_spec_holds_no_credentials(string):
    spec = model_spec(string)
    assert SECRET not in repr(spec) + str(spec) + str(asdict(spec))
    assert SECRET in string  # the caller's string keeps them: get_model talks to the server with it


def test_one_server_spelled_three_ways_is_one_spec():
    specs = {model_spec(f"openai:q@{url}") for url in (
        "http://localhost:8000/v1/", "HTTP://[::1]:8000/v1", "http://127.0.0.1:8000/v1")}
    assert specs == {ModelSpec("openai", "q", "http://127.0.0.1:8000/v1",
                               "openai:q@http://127.0.0.1:8000/v1")}


def test_anthropic_base_url_drops_the_v1_its_sdk_adds():
    assert model_spec("anthropic:c@https://api.example.com:443/v1?token=T0KEN").public == \
        "anthropic:c@https://api.example.com?token=<redacted>"


def test_local_backends_keep_their_string():
    assert model_spec("hf:org/model") == ModelSpec("hf", "org/model", None, "hf:org/model")
    assert model_spec("embedded") == ModelSpec("embedded", "", None, "embedded")


def test_a_malformed_string_is_an_error_without_its_credentials():
    with pytest.raises(MemlensError) as caught:
        parse_model_string(f"gpt@http://u:{SECRET}@h/v1")
    assert SECRET not in str(caught.value) and "'gpt@http://h/v1'" in str(caught.value)
    # a string that is not a model string (a labeler name, a path) is still shown scrubbed
    assert public_model_string(f"llm:x@http://u:{SECRET}@h") == "llm:x@http://h"
