"""JSON-ready values of result types: what every ``to_dict`` returns (numpy to lists and scalars, nested
dataclasses to dicts); their ``from_dict`` side is ``store/codec.py``."""
from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

def _jsonable(value: Any) -> Any:
    """Turn numpy scalars/arrays and nested dataclasses into JSON-ready values."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value
