"""Exactly one default environment, whatever sequence of operations (hypothesis)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from appliance.errors import Conflict, NotFound
from appliance.models import Environment
from appliance.services import environments

OPERATIONS = st.lists(
    st.tuples(
        st.sampled_from(["create", "create_default", "set_default", "disable", "enable", "delete"]),
        st.integers(min_value=0, max_value=7),
    ),
    max_size=25,
)


def _apply(ctx, org_id: str, op: str, pick: int) -> None:
    envs = list(
        Environment.select()
        .where(Environment.organization == org_id)
        .order_by(Environment.created_at)
    )
    target = envs[pick % len(envs)]
    try:
        if op.startswith("create"):
            environments.create_environment(
                ctx, org_id, {"name": f"env {pick}", "default": op == "create_default"}
            )
        elif op == "set_default":
            environments.set_default(ctx, org_id, target.id)
        elif op in ("disable", "enable"):
            environments.set_active(ctx, org_id, {"slug": target.slug}, op == "enable")
        else:
            environments.delete_environment(ctx, org_id, target.id)
    except (Conflict, NotFound):
        pass  # refused moves must leave the invariant intact too


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(OPERATIONS)
def test_exactly_one_active_default_after_any_sequence(world, operations) -> None:
    org = world.new_org(f"org-{len(Environment.select())}")
    for op, pick in operations:
        _apply(world.ctx, org.org_id, op, pick)
        defaults = list(
            Environment.select().where(
                Environment.organization == org.org_id,
                Environment.is_default == True,  # noqa: E712
            )
        )
        assert len(defaults) == 1, [(e.slug, e.is_deleted) for e in defaults]
        assert defaults[0].is_active and not defaults[0].is_deleted
        assert environments.default_count(org.org_id) == 1
