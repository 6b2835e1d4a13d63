"""Pinned study stimuli and the enrolment log.

``study_pins``: the workspace fingerprint a study was first served with;
``pinned_stimuli``: the advice and explanation of every (stimulus, condition),
computed once, so a later upload or class switch cannot change what
participants see. ``enrolment_log``: recent enrolments per study and keyed
client address, counted by every gunicorn worker for the enrolment rate limit.

Revision ID: 0002b_study_pins
Revises: 0001_initial
Create Date: 2026-12-08
"""

import sqlalchemy as sa
from alembic import op

revision = "0002b_study_pins"
down_revision = "0001_initial"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "study_pins",
        sa.Column("study_id", sa.String(64), sa.ForeignKey("studies.id"), primary_key=True),
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("model_name", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
    )
    op.create_table(
        "pinned_stimuli",
        sa.Column("study_id", sa.String(64), sa.ForeignKey("studies.id"), primary_key=True),
        sa.Column("item_id", sa.String(64), primary_key=True),
        sa.Column("condition_id", sa.String(64), primary_key=True),
        sa.Column("view", sa.JSON(), nullable=False),
    )
    op.create_table(
        "enrolment_log",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("study_id", sa.String(64), nullable=False, index=True),
        sa.Column("client_key", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False, index=True),
    )


def downgrade() -> None:
    for table in ("enrolment_log", "pinned_stimuli", "study_pins"):
        op.drop_table(table)
