"""Recruitment ids on participants (issue 16).

``participants.recruitment``: the platform's ids from the study link (Prolific
``PROLIFIC_PID``/``STUDY_ID``/``SESSION_ID``, MTurk ``workerId``/``assignmentId``/``hitId``);
``participants.recruitment_id``: ``prolific:<id>`` or ``mturk:<id>``, unique per study (NULLs
do not collide), so one platform account cannot enrol twice.

Revision ID: 0003_recruitment
Revises: 0002b_study_pins
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0003_recruitment"
down_revision = "0002b_study_pins"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("participants") as batch:
        batch.add_column(sa.Column("recruitment", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("recruitment_id", sa.String(80), nullable=True))
    op.create_index("uq_participant_recruitment", "participants", ["study_id", "recruitment_id"], unique=True)


def downgrade() -> None:
    op.drop_index("uq_participant_recruitment", table_name="participants")
    with op.batch_alter_table("participants") as batch:
        batch.drop_column("recruitment_id")
        batch.drop_column("recruitment")
