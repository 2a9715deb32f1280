"""Writing a batch of lane orders in one database call (PostgreSQL): ``pg_temp.admit_place_orders``.

The general path takes the quota lock, counts, inserts the order's rows, updates the sales
ledger and commits in a dozen round trips, with the lock held across most of them. Here the
orders of one event that queued behind the previous call (``kit/lanes/batching``) go in one call:
the quotas of all their products locked in id order, counted once from the ledger, then for
each order in turn the same checks as :func:`admit.quotas.availability.reserve` (no quota for
a product; a closed quota; a quota that would go below zero, the first in id order naming
itself) and, when it passes, its rows: the order, its positions (add-ons after their parents),
answers with their options, fees, payment and notifications, exactly the rows ``rows.build``
made for it. The ledger gets one upsert per product at the end, in key order.

The statements that decide are the general path's own (``QUOTAS_OF``, ``TAKEN``, the ledger
upsert, embedded by ``kit/lanes/plpgsql``); the rows come complete from Python and are cast to the
tables' column types by ``jsonb_populate_record``. Nothing is written for an order the call
declines: when the catalog it was validated against is no longer the database's (the stamp
or the discounts' fingerprint moved), or a quota of the batch closes when sold out or
releases after exit (the general path counts those); when its customer is
unknown, its secrets are taken or none of its codes is free (the general path reports those).
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.engine import Dialect

from admit.kit.lanes.plpgsql import embed, temp_function
from admit.models import Answer, Job, Order, OrderFee, OrderPayment, OrderPosition, OutgoingMail
from admit.orders import hooks
from admit.orders.catalog import DISCOUNT_PRINT, NO_DISCOUNTS
from admit.quotas import ledger
from admit.quotas.availability import QUOTAS_OF, TAKEN
from admit.vouchers.blocking import HELD_IN_QUOTA

# Counters of ``availability.blocking_counters`` the call accounts for: blocking vouchers by
# subtracting what they hold (``HELD_IN_QUOTA``), exited orders by declining.
COVERED_COUNTERS = frozenset({"blocking_vouchers", "exited_orders"})

ARGUMENTS = (
    ("event_id", "integer"),
    ("organizer_id", "integer"),
    ("now", "timestamptz"),
    # the batch's products (item, variation, date), sorted as the ledger locks them
    ("key_item", "integer[]"),
    ("key_variation", "integer[]"),
    ("key_subevent", "integer[]"),
    # every ticket secret and every candidate order code of the batch (looked up at once)
    ("secrets", "text[]"),
    ("codes", "text[]"),
    ("orders", "jsonb"),
)
RESULT = (
    ("outcome", "text"),  # done | sold_out | no_quota | declined | stale
    ("order_id", "integer"),
    ("code", "text"),
    ("position_ids", "integer[]"),  # in the order they were written
    ("answer_ids", "integer[]"),
    ("fee_ids", "integer[]"),
    ("payment_id", "integer"),
    ("quota_name", "text"),
    ("bad_keys", "integer[]"),  # sold_out / no_quota: the products (batch key numbers)
    # done: the order's stamp as the database left it (``models/stamp_triggers.py`` moves it to
    # the transaction's start), which the answer shows
    ("last_modified", "timestamptz"),
    ("job_id", "integer"),  # done with a mail: the job that delivers it
)
CALL = (
    "SELECT "
    + ", ".join(f"r_{name}" for name, _ in RESULT)
    + " FROM pg_temp.admit_place_orders("
    + ", ".join(f"${n}" for n in range(1, len(ARGUMENTS) + 1))
    + ")"
)


def _columns(model: type) -> str:
    table = model.__table__  # type: ignore[attr-defined]
    return ", ".join(f'"{c.name}"' for c in table.columns if c.key != "id")


def _insert(model: type, source: str, returning: bool = True, row_id: str | None = None) -> str:
    """INSERT of one row given as JSON, cast to the table's row type (with ``row_id``, the
    id taken from the table's sequence beforehand)."""
    table = model.__table__.name  # type: ignore[attr-defined]
    cols = _columns(model)
    into, values = (cols, cols) if row_id is None else (f'"id", {cols}', f"{row_id}, {cols}")
    sql = (
        f"INSERT INTO {table} ({into}) "
        f"SELECT {values} FROM jsonb_populate_record(NULL::{table}, {source})"
    )
    return sql + (" RETURNING id" if returning else "")


# A mail's delivery job names the mail (``mail/tasks.enqueue_delivery``).
_JOB_ROW = "o->'job' || jsonb_build_object('input', jsonb_build_object('mail_id', v_id))"
_MAIL_ROW = "o->'mail' || jsonb_build_object('order_id', v_order, 'job_id', r_job_id)"


def _result(outcome: str) -> str:
    """Sets the result row to ``outcome`` with nothing written."""
    names = [f"r_{name}" for name, _ in RESULT]
    return (
        f"r_outcome := '{outcome}'; "
        + " ".join(f"{n} := NULL;" for n in names[1:])
        + " RETURN NEXT;"
    )


def function_sql(dialect: Dialect) -> str:
    """``pg_temp.admit_place_orders``: one result row per order of the batch, in order."""
    key = {
        "item": "p_key_item[k]",
        "variation": "p_key_variation[k]",
        "subevent": "p_key_subevent[k]",
    }
    quotas_of = {
        variation: embed(
            QUOTAS_OF[(variation, False)],
            dialect,
            {
                "event_id": "p_event_id",
                "item_id": key["item"],
                "variation_id": key["variation"],
                "subevent_id": f"coalesce({key['subevent']}, 0)",
            },
        )
        for variation in (False, True)
    }
    taken_sql = embed(
        TAKEN,
        dialect,
        {"quota_id": "q.id", "subevent_id": "coalesce(q.subevent_id, 0)", "now": "p_now"},
    )
    # Units blocking vouchers hold in the quota (what the availability counter subtracts).
    held_sql = embed(
        HELD_IN_QUOTA, dialect, {"event_id": "p_event_id", "quota_id": "q.id", "now": "p_now"}
    )
    ledger_sql = embed(
        ledger.upsert_statement(dialect.name),
        dialect,
        {
            "item_id": "p_key_item[k]",
            "variation_id": "coalesce(p_key_variation[k], 0)",
            "subevent_id": "coalesce(p_key_subevent[k], 0)",
            "pending": "v_pending[k]",
            "paid": "v_paid[k]",
            "carts": "v_carts[k]",
        },
    )
    guards = ", ".join(
        f"EXISTS ({embed(g, dialect, {'event_id': 'p_event_id'})})" for g in hooks.GUARDS
    )
    order_row = "o->'order' || jsonb_build_object('code', v_code, 'customer_id', v_customer)"
    position_row = "p->'row' || jsonb_build_object('order_id', v_order, 'addon_to_id', v_parent)"
    answer_row = "a->'row' || jsonb_build_object('orderposition_id', v_positions[(a->>'pos')::int])"
    body = f"""
v_keys := coalesce(cardinality(p_key_item), 0);
-- The catalog every order was validated against must still be the database's.
SELECT catalog_modified INTO v_stamp FROM events WHERE id = p_event_id;
-- (Most events have no discounts: one probe then, the fingerprint of nothing.)
IF EXISTS (SELECT FROM discounts WHERE event_id = p_event_id) THEN
    v_print := {DISCOUNT_PRINT.format(event="p_event_id")};
ELSE
    v_print := '{NO_DISCOUNTS}';
END IF;
-- Rows that give an order hook work to do (``hooks.GUARDS``, by index).
v_guards := ARRAY[{guards}]::boolean[];
v_declined := false;
-- Every quota of every product of the batch, locked in id order (the lock every sale takes).
v_pairs := '{{}}';
v_has_quota := array_fill(false, ARRAY[v_keys]);
FOR k IN 1 .. v_keys LOOP
    IF p_key_variation[k] IS NULL THEN
        SELECT array_agg(l.id) INTO v_ids FROM ({quotas_of[False]}) AS l;
    ELSE
        SELECT array_agg(l.id) INTO v_ids FROM ({quotas_of[True]}) AS l;
    END IF;
    v_pairs := v_pairs || ARRAY(SELECT k::bigint << 32 | x FROM unnest(v_ids) AS x);
    v_has_quota[k] := v_ids IS NOT NULL;
END LOOP;
SELECT coalesce(array_agg(DISTINCT (x & 4294967295)::integer), '{{}}')
    INTO v_all FROM unnest(v_pairs) AS x;
-- Locked in id order and read once locked: what is left of each (NULL: unlimited).
v_quota_ids := '{{}}'; v_quota_names := '{{}}'; v_quota_closed := '{{}}'; v_left := '{{}}';
-- A batch of shop checkouts only takes over units their carts hold: it changes no quota's
-- count, so it reads the quotas without the lock every sale takes (``create._takes_over``).
v_all_carts := NOT EXISTS (
    SELECT FROM jsonb_array_elements(p_orders) AS x WHERE x->'cart' IS NULL);
IF NOT v_all_carts THEN
    PERFORM FROM quotas WHERE id = ANY(v_all) ORDER BY id FOR UPDATE;
END IF;
FOR q IN SELECT id, name, size, closed, subevent_id,
        close_when_sold_out OR release_after_exit AS special
        FROM quotas WHERE id = ANY(v_all) ORDER BY id LOOP
    v_declined := v_declined OR q.special;
    v_quota_ids := v_quota_ids || q.id;
    v_quota_names := v_quota_names || q.name::text;
    v_quota_closed := v_quota_closed || q.closed;
    IF q.size IS NULL THEN
        v_left := v_left || NULL::bigint;
    ELSE
        SELECT t.* INTO v_t_pending, v_t_paid, v_t_carts, v_t_stale FROM ({taken_sql}) AS t;
        SELECT coalesce(sum(h.held), 0) INTO v_held FROM ({held_sql}) AS h;
        v_left := v_left || (q.size - (v_t_pending + v_t_paid + v_t_carts - v_t_stale) - v_held);
    END IF;
END LOOP;
v_pending := array_fill(0, ARRAY[v_keys]);
v_carts := array_fill(0, ARRAY[v_keys]);
v_paid := array_fill(0, ARRAY[v_keys]);
v_taken_secrets := ARRAY(
    SELECT secret FROM order_positions WHERE event_id = p_event_id AND secret = ANY(p_secrets));
v_taken_codes := ARRAY(
    SELECT code FROM orders WHERE event_id = p_event_id AND code = ANY(p_codes));
FOR o IN SELECT value FROM jsonb_array_elements(p_orders) LOOP
    IF v_declined THEN
        {_result("declined")}
        CONTINUE;
    END IF;
    IF (o->>'stamp')::timestamptz IS DISTINCT FROM v_stamp
            OR o->>'discounts' IS DISTINCT FROM v_print THEN
        {_result("stale")}
        CONTINUE;
    END IF;
    v_busy := false;
    FOR j IN 0 .. jsonb_array_length(o->'guards') - 1 LOOP
        v_busy := v_busy OR v_guards[(o->'guards'->>j)::integer + 1] IS NOT FALSE;
    END LOOP;
    IF v_busy THEN
        {_result("declined")}
        CONTINUE;
    END IF;
    -- What the general path reports: an unknown customer, taken secrets, no free code.
    v_customer := NULL;
    IF o->>'customer' IS NOT NULL THEN
        SELECT id INTO v_customer FROM customers
        WHERE organizer_id = p_organizer_id AND identifier = o->>'customer';
        IF v_customer IS NULL THEN
            {_result("declined")}
            CONTINUE;
        END IF;
    END IF;
    v_busy := false;
    FOR j IN 0 .. jsonb_array_length(o->'secrets') - 1 LOOP
        v_busy := v_busy OR (o->'secrets'->>j) = ANY(v_taken_secrets);
    END LOOP;
    IF v_busy THEN
        {_result("declined")}
        CONTINUE;
    END IF;
    v_code := NULL;
    FOR j IN 0 .. jsonb_array_length(o->'codes') - 1 LOOP
        IF NOT (o->'codes'->>j) = ANY(v_taken_codes) THEN
            v_code := o->'codes'->>j;
            EXIT;
        END IF;
    END LOOP;
    IF v_code IS NULL THEN
        {_result("declined")}
        CONTINUE;
    END IF;
    -- A shop checkout (``o->'cart'``): the order takes over the units its cart's rows hold,
    -- exactly the rows the caller validated, all unexpired (else the general path, which
    -- checks again); they leave, the order's units come, the quota's count stays.
    v_cart := o->'cart' IS NOT NULL;
    IF v_cart THEN
        v_ids := ARRAY(SELECT x::integer FROM jsonb_array_elements_text(o->'cart'->'ids') AS x
                       ORDER BY 1);
        SELECT coalesce(array_agg(c.id ORDER BY c.id), '{{}}'),
                coalesce(bool_and(c.expires > p_now), false)
            INTO v_cart_ids, v_live
            FROM (SELECT id, expires FROM cart_positions
                  WHERE event_id = p_event_id AND cart_id = o->'cart'->>'id'
                  ORDER BY id FOR UPDATE) AS c;
        IF v_cart_ids IS DISTINCT FROM v_ids OR NOT v_live THEN
            {_result("declined")}
            CONTINUE;
        END IF;
    END IF;
    -- The quota check (skipped with force, as the general path skips it, and for units a
    -- cart held).
    v_dk := '{{}}';
    v_dn := '{{}}';
    FOR j IN 0 .. jsonb_array_length(o->'dk') - 1 LOOP
        v_dk := v_dk || (o->'dk'->>j)::integer;
        v_dn := v_dn || (o->'dn'->>j)::integer;
    END LOOP;
    v_force := (o->>'force')::boolean OR v_cart;
    r_outcome := NULL;
    IF NOT v_force THEN
        FOR j IN 1 .. cardinality(v_dk) LOOP
            k := v_dk[j];
            IF NOT v_has_quota[k] THEN
                {_result("no_quota").replace(" RETURN NEXT;", "")}
                r_bad_keys := ARRAY[k];
                EXIT;
            END IF;
        END LOOP;
    END IF;
    v_need := array_fill(0, ARRAY[greatest(cardinality(v_quota_ids), 1)]);
    FOR qi IN 1 .. cardinality(v_quota_ids) LOOP
        FOR j IN 1 .. cardinality(v_dk) LOOP
            IF (v_dk[j]::bigint << 32 | v_quota_ids[qi]) = ANY(v_pairs) THEN
                v_need[qi] := v_need[qi] + v_dn[j];
            END IF;
        END LOOP;
        -- Closed, or short (a NULL left is an unlimited quota).
        IF r_outcome IS NULL AND NOT v_force AND v_need[qi] > 0 AND (
            v_quota_closed[qi]
            OR (v_left[qi] IS NOT NULL AND v_need[qi] > greatest(v_left[qi], 0))
        ) THEN
            {_result("sold_out").replace(" RETURN NEXT;", "")}
            r_quota_name := v_quota_names[qi];
            r_bad_keys := ARRAY(
                SELECT DISTINCT (x >> 32)::integer FROM unnest(v_pairs) AS x
                WHERE (x & 4294967295) = v_quota_ids[qi] ORDER BY 1);
        END IF;
        -- A cart's units on a quota closed or made smaller than what it counts since: the
        -- general path refuses the order (with its message).
        IF r_outcome IS NULL AND v_cart AND v_need[qi] > 0 AND (
            v_quota_closed[qi] OR (v_left[qi] IS NOT NULL AND v_left[qi] < 0)
        ) THEN
            {_result("declined").replace(" RETURN NEXT;", "")}
        END IF;
    END LOOP;
    IF r_outcome IS NOT NULL THEN
        RETURN NEXT;
        CONTINUE;
    END IF;
    IF NOT v_cart THEN
        FOR qi IN 1 .. cardinality(v_quota_ids) LOOP
            v_left[qi] := v_left[qi] - v_need[qi];
        END LOOP;
    ELSE
        DELETE FROM cart_positions WHERE id = ANY(v_ids);
    END IF;
    -- The rows (its secrets and code count as taken for the orders after it).
    FOR j IN 0 .. jsonb_array_length(o->'secrets') - 1 LOOP
        v_taken_secrets := v_taken_secrets || (o->'secrets'->>j);
    END LOOP;
    v_taken_codes := v_taken_codes || v_code;
    {_insert(Order, order_row)} INTO v_order;
    v_positions := '{{}}';
    v_positionids := '{{}}';
    FOR p IN SELECT value FROM jsonb_array_elements(o->'positions') LOOP
        v_parent := NULL;
        IF p->>'addon_to' IS NOT NULL THEN
            v_parent := v_positions[array_position(v_positionids, (p->>'addon_to')::integer)];
        END IF;
        {_insert(OrderPosition, position_row)} INTO v_id;
        v_positions := v_positions || v_id;
        v_positionids := v_positionids || (p->>'positionid')::integer;
    END LOOP;
    r_answer_ids := '{{}}';
    FOR a IN SELECT value FROM jsonb_array_elements(o->'answers') LOOP
        {_insert(Answer, answer_row)} INTO v_id;
        r_answer_ids := r_answer_ids || v_id;
        INSERT INTO answer_options (answer_id, option_id)
        SELECT v_id, x::integer FROM jsonb_array_elements_text(a->'options') AS x;
    END LOOP;
    r_fee_ids := '{{}}';
    FOR f IN SELECT value FROM jsonb_array_elements(o->'fees') LOOP
        {_insert(OrderFee, "f || jsonb_build_object('order_id', v_order)")} INTO v_id;
        r_fee_ids := r_fee_ids || v_id;
    END LOOP;
    {_insert(OrderPayment, "o->'payment' || jsonb_build_object('order_id', v_order)")}
        INTO r_payment_id;
    INSERT INTO notifications (organizer_id, event_id, action, payload, created)
    SELECT p_organizer_id, p_event_id, x.action, jsonb_build_object('code', v_code), p_now
    FROM jsonb_array_elements_text(o->'actions') WITH ORDINALITY AS x(action, n) ORDER BY x.n;
    -- The buyer's mail with the job that delivers it (the sweep hands it to the broker).
    r_job_id := NULL;
    IF o->'mail' IS NOT NULL THEN
        -- The mail's id first: the job names it, and the mail is written naming its job
        -- (no second version of the mail's row).
        v_id := nextval(pg_get_serial_sequence('outgoing_mails', 'id'));
        {_insert(Job, _JOB_ROW)}
            INTO r_job_id;
        {_insert(OutgoingMail, _MAIL_ROW, returning=False, row_id="v_id")};
    END IF;
    FOR j IN 1 .. cardinality(v_dk) LOOP
        IF v_cart THEN
            v_carts[v_dk[j]] := v_carts[v_dk[j]] - v_dn[j];
        END IF;
        IF o->'order'->>'status' = 'p' THEN
            v_paid[v_dk[j]] := v_paid[v_dk[j]] + v_dn[j];
        ELSE
            v_pending[v_dk[j]] := v_pending[v_dk[j]] + v_dn[j];
        END IF;
    END LOOP;
    r_outcome := 'done';
    SELECT last_modified INTO r_last_modified FROM orders WHERE id = v_order;
    r_order_id := v_order;
    r_code := v_code;
    r_position_ids := v_positions;
    r_quota_name := NULL;
    r_bad_keys := NULL;
    RETURN NEXT;
END LOOP;
-- The sales ledger, one upsert per product, in key order.
FOR k IN 1 .. v_keys LOOP
    IF v_pending[k] <> 0 OR v_paid[k] <> 0 OR v_carts[k] <> 0 THEN
        {ledger_sql};
    END IF;
END LOOP;
"""
    declare = """
k integer; j integer; qi integer; v_keys integer; v_customer integer; v_order integer;
v_parent integer; v_id integer;
q record;
o jsonb; p jsonb; a jsonb; f jsonb;
v_stamp timestamptz;
v_print text; v_code text;
v_declined boolean; v_cart boolean; v_all_carts boolean; v_live boolean; v_busy boolean;
v_force boolean;
v_guards boolean[]; v_quota_closed boolean[]; v_has_quota boolean[];
v_ids integer[]; v_all integer[]; v_quota_ids integer[]; v_pending integer[];
v_carts integer[]; v_cart_ids integer[]; v_paid integer[]; v_dk integer[]; v_dn integer[];
v_positions integer[]; v_positionids integer[];
v_pairs bigint[]; v_left bigint[]; v_need bigint[];
v_quota_names text[]; v_taken_secrets text[]; v_taken_codes text[];
v_held bigint; v_t_pending bigint; v_t_paid bigint; v_t_carts bigint; v_t_stale bigint;
"""
    arguments = (
        ", ".join(f"p_{n} {t}" for n, t in ARGUMENTS)
        + ", "
        + ", ".join(f"OUT r_{n} {t}" for n, t in RESULT)
    )
    return temp_function("admit_place_orders", arguments, "SETOF record", declare, body)


def key_order(
    keys: Sequence[tuple[int, int | None, int | None]],
) -> list[tuple[int, int | None, int | None]]:
    """The batch's products in the ledger's lock order."""
    return sorted(set(keys), key=lambda k: ledger.key_of(*k))
