"""Initial study-mode schema: studies, participants, trial_log, questionnaire_responses.

Revision ID: 0001_initial
Revises:
Create Date: 2026-11-30
"""

import sqlalchemy as sa
from alembic import op

revision = "0001_initial"
down_revision = None
branch_labels = None
depends_on = None

APPEND_ONLY = ("trial_log", "questionnaire_responses")


def upgrade() -> None:
    op.create_table(
        "studies",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("spec_yaml", sa.Text(), nullable=False),
        sa.Column("spec_sha256", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
    )
    op.create_table(
        "participants",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("study_id", sa.String(64), sa.ForeignKey("studies.id"), nullable=False, index=True),
        sa.Column("resume_token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("session_id", sa.String(40), nullable=False),
        sa.Column("consent_version", sa.String(64), nullable=False),
        sa.Column("stratum", sa.String(64), nullable=False),
        sa.Column("condition", sa.String(64), nullable=False),
        sa.Column("condition_order", sa.JSON(), nullable=False),
        sa.Column("assignment_seed", sa.BigInteger(), nullable=False),
        sa.Column("alloc_position", sa.Integer(), nullable=False),
        sa.Column("alloc_block_index", sa.Integer(), nullable=False),
        sa.Column("alloc_block_size", sa.Integer(), nullable=False),
        sa.Column("stimulus_order", sa.JSON(), nullable=False),
        sa.Column("progress", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("completion_code", sa.String(32), nullable=True),
        sa.Column("exclusion_reason", sa.String(64), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("completed_at", sa.DateTime(), nullable=True),
        sa.UniqueConstraint("study_id", "stratum", "alloc_position", name="uq_participant_slot"),
    )
    op.create_table(
        "trial_log",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("study_id", sa.String(64), sa.ForeignKey("studies.id"), nullable=False, index=True),
        sa.Column("participant_id", sa.String(40), sa.ForeignKey("participants.id"), nullable=False, index=True),
        sa.Column("session_id", sa.String(40), nullable=False),
        sa.Column("consent_version", sa.String(64), nullable=False),
        sa.Column("condition", sa.String(64), nullable=False),
        sa.Column("assignment_seed", sa.BigInteger(), nullable=False),
        sa.Column("block_index", sa.Integer(), nullable=False),
        sa.Column("trial_index", sa.Integer(), nullable=False),
        sa.Column("phase", sa.String(16), nullable=False),
        sa.Column("item_id", sa.String(64), nullable=False),
        sa.Column("item_order_position", sa.Integer(), nullable=False),
        sa.Column("truth", sa.String(64), nullable=True),
        sa.Column("model_prediction", sa.String(64), nullable=True),
        sa.Column("model_correct", sa.Boolean(), nullable=True),
        sa.Column("explanation_id", sa.String(128), nullable=True),
        sa.Column("explanation_parent_id", sa.String(128), nullable=True),
        sa.Column("operators", sa.JSON(), nullable=True),
        sa.Column("fidelity_metric", sa.String(32), nullable=True),
        sa.Column("fidelity", sa.Float(), nullable=True),
        sa.Column("complexity", sa.JSON(), nullable=True),
        sa.Column("response", sa.Text(), nullable=False),
        sa.Column("correct", sa.Boolean(), nullable=True),
        sa.Column("rt_ms", sa.Float(), nullable=True),
        sa.Column("confidence", sa.Float(), nullable=True),
        sa.Column("attention_check_passed", sa.Boolean(), nullable=True),
        sa.Column("client_timestamp", sa.DateTime(), nullable=True),
        sa.Column("server_timestamp", sa.DateTime(), nullable=False),
        sa.Column("ui_version", sa.String(32), nullable=False),
        sa.Column("instrument_versions", sa.JSON(), nullable=False),
        sa.UniqueConstraint("participant_id", "trial_index", "phase", name="uq_trial_phase"),
    )
    op.create_table(
        "questionnaire_responses",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("study_id", sa.String(64), sa.ForeignKey("studies.id"), nullable=False, index=True),
        sa.Column("participant_id", sa.String(40), sa.ForeignKey("participants.id"), nullable=False, index=True),
        sa.Column("condition", sa.String(64), nullable=False),
        sa.Column("block_index", sa.Integer(), nullable=False),
        sa.Column("questionnaire_id", sa.String(64), nullable=False),
        sa.Column("instrument", sa.String(64), nullable=False),
        sa.Column("instrument_version", sa.Text(), nullable=False),
        sa.Column("item_label", sa.String(64), nullable=False),
        sa.Column("item_text", sa.Text(), nullable=False),
        sa.Column("reverse", sa.Boolean(), nullable=False),
        sa.Column("scale_points", sa.Integer(), nullable=False),
        sa.Column("response", sa.Integer(), nullable=False),
        sa.Column("client_timestamp", sa.DateTime(), nullable=True),
        sa.Column("server_timestamp", sa.DateTime(), nullable=False),
        sa.UniqueConstraint("participant_id", "block_index", "questionnaire_id", "item_label",
                            name="uq_questionnaire_item"),
    )
    _append_only_triggers()


def _append_only_triggers() -> None:
    """Reject UPDATE and DELETE on the logs at the database level."""
    dialect = op.get_bind().dialect.name
    if dialect == "sqlite":
        for table in APPEND_ONLY:
            for verb in ("UPDATE", "DELETE"):
                op.execute(
                    f"CREATE TRIGGER {table}_no_{verb.lower()} BEFORE {verb} ON {table} "
                    f"BEGIN SELECT RAISE(ABORT, '{table} is append-only'); END"
                )
    elif dialect == "postgresql":
        op.execute(
            "CREATE OR REPLACE FUNCTION candor_study_append_only() RETURNS trigger AS $$ "
            "BEGIN RAISE EXCEPTION '% is append-only', TG_TABLE_NAME; END; $$ LANGUAGE plpgsql"
        )
        for table in APPEND_ONLY:
            op.execute(
                f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
                "FOR EACH ROW EXECUTE FUNCTION candor_study_append_only()"
            )


def downgrade() -> None:
    dialect = op.get_bind().dialect.name
    for table in APPEND_ONLY:
        if dialect == "sqlite":
            op.execute(f"DROP TRIGGER IF EXISTS {table}_no_update")
            op.execute(f"DROP TRIGGER IF EXISTS {table}_no_delete")
        elif dialect == "postgresql":
            op.execute(f"DROP TRIGGER IF EXISTS {table}_append_only ON {table}")
    if dialect == "postgresql":
        op.execute("DROP FUNCTION IF EXISTS candor_study_append_only()")
    for table in ("questionnaire_responses", "trial_log", "participants", "studies"):
        op.drop_table(table)
