"""Read the data table's records by the names the user sees (the records themselves use our own keys)."""


def by_name(records: list[dict]) -> list[dict]:
    """``records`` from :func:`app.services.data_page`, keyed by :func:`app.services.data_columns`' names."""
    from app import services

    columns = services.data_columns()
    return [{c["name"]: r[c["id"]] for c in columns} for r in records]
