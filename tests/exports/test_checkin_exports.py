"""Check-in exports: the attendee list of one list (XLSX, CSV, PDF) and the check-in log, run
as ``export.run`` jobs and read back with openpyxl, csv and pypdf."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

import pytest
from sqlalchemy import insert, select, update

from admit.exports.exporters import attendee_pdf, checkin
from admit.exports.exporters.attendees import Selection, attendees, load_catalog
from admit.exports.exporters.listing import event_info
from admit.kit.pdf import fonts
from admit.models import (
    Answer,
    Checkin,
    CheckinList,
    Event,
    Item,
    Order,
    OrderPosition,
    Question,
    QuestionOption,
    Seat,
    answer_options,
)
from tests.checkin import helpers as h
from tests.exports.jobrun import (
    by_header,
    csv_rows,
    fetch_download,
    pdf_text,
    result,
    run_export,
    xlsx_rows,
)
from tests.factories import Factory, World, assert_field_errors, auth

BERLIN_ENTRY = dt.datetime(2030, 5, 1, 8, 30, tzinfo=dt.UTC)  # 10:30 in Berlin (CEST)
CYRILLIC = "Анна Каренина"
GREEK = "Ελένη Παππά"
CJK = "王小明"


@dataclass
class Scene:
    world: World
    clist: CheckinList
    pending_list: CheckinList
    ticket: Item
    codes: dict[str, str]  # who -> order code
    questions: dict[str, Question]


async def order(
    factory: Factory,
    event: Event,
    item: Item,
    *,
    status: str = "p",
    variation: Any = None,
    position: dict[str, Any] | None = None,
    **kw: Any,
) -> tuple[Order, list[OrderPosition]]:
    """A one-ticket order with the attendee named in ``position`` (``name``, ``email``,
    ``seat_id``)."""
    extra = dict(position or {})
    name = extra.pop("name", None)
    obj, (pos,) = await h.order(factory, event, item, status=status, variation=variation, **kw)
    async with factory.sessionmaker() as s:
        row = await s.get(OrderPosition, pos.id)
        row.attendee_name_cached = name
        row.attendee_name_parts = {"_legacy": name} if name else {}
        row.attendee_email = extra.pop("email", None)
        for key, value in extra.items():
            setattr(row, key, value)
        await s.commit()
        return obj, [row]


async def _answer(factory: Factory, position: OrderPosition, question: Question, text: str,
                  options: list[int] = ()) -> None:  # fmt: skip
    async with factory.sessionmaker() as s:
        answer = Answer(orderposition_id=position.id, question_id=question.id, answer=text)
        s.add(answer)
        await s.flush()
        for option_id in options:
            await s.execute(insert(answer_options).values(answer_id=answer.id, option_id=option_id))
        await s.commit()


async def build(factory: Factory, world: World) -> Scene:
    async with factory.sessionmaker() as s:
        await s.execute(
            update(Event).where(Event.id == world.event.id).values(timezone="Europe/Berlin")
        )
        await s.commit()
    event = world.event
    ticket = await h.ticket(factory, event, "Ticket")
    vip = await h.ticket(factory, event, "VIP")
    gold = await h.variation(factory, vip, "Gold")
    parking = await h.ticket(factory, event, "Parking")
    size = await h.question(factory, event, [ticket, vip], "S", text="T-shirt size")
    async with factory.sessionmaker() as s:
        q = await s.get(Question, size.id)
        q.question = {"en": "T-shirt size", "de": "T-Shirt-Größe"}
        await s.commit()
    diet = await h.question(factory, event, [ticket, vip], "C", ["Vegan", "Meat"], text="Diet")
    news = await h.question(factory, event, [ticket, vip], "B", text="Newsletter")
    clist = await h.checkin_list(factory, event, "Main entrance", items=[ticket, vip])
    pending_list = await h.checkin_list(
        factory, event, "Box office", items=[ticket, vip], include_pending=True
    )

    def named(name: str, email: str | None = None) -> dict[str, Any]:
        return {"name": name, "email": email}

    codes: dict[str, str] = {}
    o1, (anna,) = await order(factory, event, ticket, position=named(CYRILLIC, "anna@x.org"))
    codes["anna"] = o1.code
    seat = await factory._add(
        Seat(
            event_id=event.id, seat_guid="A-1-5", zone_name="Stalls", row_name="1", seat_number="5"
        )
    )
    o2, (elena,) = await order(
        factory, event, vip, variation=gold, position={**named(GREEK), "seat_id": seat.id}
    )
    codes["elena"] = o2.code
    await h.addon(factory, o2, elena, ticket, 2)
    o3, _ = await order(factory, event, ticket, status="n", position=named("Pending Person"))
    codes["pending"] = o3.code
    o4, _ = await order(factory, event, ticket, status="c", position=named("Canceled Person"))
    codes["canceled"] = o4.code
    o5, _ = await order(factory, event, parking, position=named("Parking Person"))
    codes["parking"] = o5.code
    o6, _ = await order(factory, event, ticket, position=named(CJK))
    codes["cjk"] = o6.code
    o7, _ = await order(
        factory, event, ticket, status="n", valid_if_pending=True, position=named("Valid Pending")
    )
    codes["valid_pending"] = o7.code

    diet_options = {o: i for o, i in await _options(factory, diet)}
    await _answer(factory, anna, size, "XL")
    await _answer(factory, anna, diet, "Vegan", [diet_options["Vegan"]])
    await _answer(factory, anna, news, "True")
    await _answer(factory, elena, size, "S")
    await _answer(factory, elena, news, "False")
    await factory._add(
        Checkin(
            event_id=event.id,
            list_id=clist.id,
            position_id=anna.id,
            seq=1,
            datetime=BERLIN_ENTRY,
            type="entry",
        )
    )
    return Scene(
        world, clist, pending_list, ticket, codes, {"size": size, "diet": diet, "news": news}
    )


async def _options(factory: Factory, question: Question) -> list[tuple[str, int]]:
    async with factory.sessionmaker() as s:
        rows = await s.execute(
            select(QuestionOption.answer, QuestionOption.id).where(
                QuestionOption.question_id == question.id
            )
        )
        return [(answer["en"], option_id) for answer, option_id in rows]


async def _export(clean_app, scene: Scene, form: dict[str, Any], **kw: Any):
    world = scene.world
    return await run_export(
        clean_app, kw.pop("token", world.admin), kw.pop("identifier", "checkinlist"), form,
        organizer=world.org, event=world.event, **kw,
    )  # fmt: skip


async def test_xlsx_attendees_match_the_list(clean_app, background, factory, world):
    scene = await build(factory, world)
    job = await _export(clean_app, scene, {"_format": "xlsx", "list": scene.clist.id})
    rows = by_header(xlsx_rows(await result(background, job)))
    codes = scene.codes
    # Paid tickets on the list, the add-on (its parent's name), the order valid while pending;
    # not the pending, canceled or parking orders.
    assert sorted(r["Order code"] for r in rows) == sorted(
        [codes["anna"], codes["elena"], codes["elena"], codes["cjk"], codes["valid_pending"]]
    )
    by_name = {}
    for r in rows:
        by_name.setdefault(r["Attendee name"], []).append(r)
    anna = by_name[CYRILLIC][0]
    assert anna["Checked in"] == "Yes"
    assert anna["Last check-in"] == dt.datetime(2030, 5, 1, 10, 30)  # Europe/Berlin
    assert anna["Price"] == 23 and anna["Paid"] == "Yes"
    assert anna["E-mail"] == "anna@x.org"
    assert anna["T-shirt size"] == "XL" and anna["Diet"] == "Vegan"
    assert anna["Newsletter"] == "Yes"
    elena, addon = sorted(by_name[GREEK], key=lambda r: r["Position ID"])
    assert elena["Product"] == "VIP – Gold"
    assert elena["Seat ID"] == "A-1-5" and elena["Seat zone"] == "Stalls"
    assert elena["Checked in"] == "No" and elena["Last check-in"] is None
    assert elena["Newsletter"] == "No" and elena["T-shirt size"] == "S"
    # The add-on has no name or answers of its own: its parent's show.
    assert addon["Product"] == "Ticket" and addon["T-shirt size"] == "S"
    assert by_name["Valid Pending"][0]["Paid"] == "No"
    assert by_name[CJK][0]["Order code"] == codes["cjk"]
    # Sorted by name (case-insensitive) by default.
    names = [r["Attendee name"] for r in rows]
    assert names == sorted(names, key=str.lower)


async def test_csv_in_german_with_pending_list_and_code_order(
    clean_app, background, factory, world
):
    scene = await build(factory, world)
    job = await _export(
        clean_app,
        scene,
        {"_format": "csv", "list": scene.pending_list.id, "sort": "code", "secrets": True},
        locale="de",
    )
    raw = csv_rows(await result(background, job))
    header = raw[0]
    assert header[:3] == ["Bestellnummer", "Positions-ID", "Name des Teilnehmers"]
    assert "T-Shirt-Größe" in header and "Ticket-Code" in header
    rows = by_header(raw)
    codes = [r["Bestellnummer"] for r in rows]
    assert codes == sorted(codes)
    # The list includes pending orders: the pending one is there now.
    assert scene.codes["pending"] in codes and scene.codes["canceled"] not in codes
    assert len(rows) == 6
    assert {r["Preis"] for r in rows} == {"23.00", "5.00"}
    assert {r["Eingecheckt"] for r in rows} == {"Nein"}  # the entry was on the other list


async def test_csv_datetimes_carry_the_event_offset(clean_app, background, factory, world):
    scene = await build(factory, world)
    job = await _export(
        clean_app, scene, {"_format": "csv", "list": scene.clist.id, "questions": []}
    )
    rows = by_header(csv_rows(await result(background, job)))
    anna = next(r for r in rows if r["Attendee name"] == CYRILLIC)
    assert anna["Last check-in"] == "2030-05-01T10:30:00+02:00"
    assert "T-shirt size" not in anna  # no questions asked for


async def test_pdf_sheet_prints_every_script(clean_app, background, factory, world, monkeypatch):
    scene = await build(factory, world)
    tables: list[int] = []
    add = attendee_pdf.ChunkedDocument.add

    def spy(self, flowables):
        tables.extend(len(f._cellvalues) for f in flowables if hasattr(f, "_cellvalues"))
        return add(self, flowables)

    monkeypatch.setattr(attendee_pdf.ChunkedDocument, "add", spy)
    monkeypatch.setattr(checkin, "ROWS_PER_TABLE", 2)
    job = await _export(clean_app, scene, {"_format": "pdf", "list": scene.clist.id})
    assert job.result_type == "application/pdf" and job.result_name.endswith(".pdf")
    data = await result(background, job)
    text = pdf_text(data)
    for who in ("anna", "elena", "cjk", "valid_pending"):
        assert scene.codes[who] in text
    for code in ("pending", "canceled", "parking"):
        assert scene.codes[code] not in text
    assert CYRILLIC in text and GREEK in text
    assert "Main entrance" in text and "T-shirt size" in text
    # CJK runs use an embedded CJK font (no boxes): it is in the file and the text reads.
    assert fonts.CJK.encode() in data and b"/FontFile2" in data
    assert CJK in text.replace(" ", "")
    # Five tickets, two per table: three tables of at most header + 2 rows.
    assert tables == [3, 3, 2]


async def test_pdf_identifier_of_the_reference(clean_app, background, factory, world):
    scene = await build(factory, world)
    job = await _export(
        clean_app, scene, {"list": scene.clist.id}, identifier="checkinlistpdf", locale="de"
    )
    text = pdf_text(await result(background, job))
    assert scene.codes["anna"] in text and "Bestellnummer" in text


async def test_list_of_another_event_fails(clean_app, background, factory, world):
    scene = await build(factory, world)
    other = await h.checkin_list(factory, world.other_event, "Theirs")
    job = await _export(clean_app, scene, {"_format": "xlsx", "list": other.id})
    assert job.status == "failed"
    assert "list" in job.message and str(other.id) in job.message
    job = await _export(
        clean_app, scene, {"_format": "xlsx", "list": scene.clist.id, "questions": [999999]}
    )
    assert job.status == "failed" and "questions" in job.message


async def test_owner_without_orders_permission_fails(clean_app, background, factory, world):
    scene = await build(factory, world)
    team = await factory.team(world.org, event_permissions=["event.vouchers:read"])
    token = await factory.token(team)
    job = await _export(clean_app, scene, {"_format": "csv", "list": scene.clist.id}, token=token)
    assert job.status == "failed" and "permission" in job.message
    assert job.result_key is None


async def test_bad_input_fails_the_job(clean_app, background, factory, world):
    scene = await build(factory, world)
    job = await _export(clean_app, scene, {"_format": "docx", "list": scene.clist.id})
    assert job.status == "failed" and "no longer valid" in job.message
    job = await _export(clean_app, scene, {"_format": "csv"})
    assert job.status == "failed"


# -- check-in log ----------------------------------------------------------------------------


async def _scans(factory: Factory, scene: Scene) -> None:
    world = scene.world
    _token, device = await h.device(factory, world.org, gate="North gate", number=7)
    async with factory.sessionmaker() as s:
        rows = await s.execute(
            select(Order.code, OrderPosition.id)
            .join(Order, Order.id == OrderPosition.order_id)
            .order_by(OrderPosition.id)
        )
        by_code: dict[str, int] = {}
        for code, pid in rows:
            by_code.setdefault(code, pid)
    c = scene.codes
    base = dt.datetime(2030, 5, 1, 7, 0, tzinfo=dt.UTC)
    scans = [
        # (minutes, list, code, type, successful, reason, device, auto)
        (0, scene.clist, "elena", "entry", True, None, True, False),
        (30, scene.clist, "elena", "exit", True, None, True, False),
        (60, scene.clist, "pending", "entry", False, "unpaid", False, False),
        (90, scene.pending_list, "cjk", "entry", True, None, False, True),
        (2 * 24 * 60, scene.clist, None, "entry", False, "invalid", True, False),
    ]
    async with factory.sessionmaker() as s:
        for minutes, clist, who, kind, ok, reason, by_device, auto in scans:
            s.add(
                Checkin(
                    event_id=world.event.id,
                    list_id=clist.id,
                    position_id=by_code[c[who]] if who else None,
                    type=kind,
                    datetime=base + dt.timedelta(minutes=minutes),
                    created=base + dt.timedelta(minutes=minutes + 5),
                    successful=ok,
                    error_reason=reason,
                    auto_checked_in=auto,
                    device_id=device.id if by_device else None,
                    gate_id=device.gate_id if by_device else None,
                    raw_barcode="NOSUCHCODE" if who is None else None,
                )
            )
        await s.commit()


async def test_checkin_log_has_every_scan(clean_app, background, factory, world):
    scene = await build(factory, world)
    await _scans(factory, scene)
    job = await _export(clean_app, scene, {"_format": "xlsx"}, identifier="checkinlog")
    rows = by_header(xlsx_rows(await result(background, job)))
    # The five scans plus the entry the scene made (at 08:30 UTC), in time order.
    assert len(rows) == 6
    times = [r["Date"] for r in rows]
    assert times == sorted(times)
    first = rows[0]
    assert first["Date"] == dt.datetime(2030, 5, 1, 9, 0)  # 07:00 UTC in Berlin
    assert first["Upload date"] == dt.datetime(2030, 5, 1, 9, 5)
    assert first["Order code"] == scene.codes["elena"] and first["Attendee name"] == GREEK
    assert first["Product"] == "VIP – Gold" and first["Check-in list"] == "Main entrance"
    assert first["Device"] == "Scanner 7" and first["Gate"] == "North gate"
    assert first["Successful"] == "Yes" and first["Scan type"] == "Entry"
    assert rows[1]["Scan type"] == "Exit"
    failed = rows[2]
    assert failed["Successful"] == "No" and failed["Error reason"] == "Ticket not paid"
    auto = next(r for r in rows if r["Check-in list"] == "Box office")
    assert auto["Automatically checked in"] == "Yes" and auto["Attendee name"] == CJK
    unknown = rows[-1]
    assert unknown["Order code"] is None and unknown["Scanned code"] == "NOSUCHCODE"
    assert unknown["Error reason"] == "Unknown ticket"


async def test_checkin_log_filters(clean_app, background, factory, world):
    scene = await build(factory, world)
    await _scans(factory, scene)
    job = await _export(
        clean_app, scene,
        {"_format": "csv", "list": scene.clist.id, "successful_only": True,
         "date_from": "2030-05-01", "date_to": "2030-05-01"},
        identifier="checkinlog", locale="de",
    )  # fmt: skip
    rows = by_header(csv_rows(await result(background, job)))
    assert [r["Scan-Typ"] for r in rows] == ["Eingang", "Ausgang", "Eingang"]
    assert {r["Erfolgreich"] for r in rows} == {"Ja"}
    # Naive moments are Berlin time: 09:15 to 09:45 holds the exit (07:30 UTC) alone.
    job = await _export(
        clean_app, scene,
        {"_format": "csv", "date_from": "2030-05-01T09:15", "date_to": "2030-05-01T09:45"},
        identifier="checkinlog",
    )  # fmt: skip
    rows = by_header(csv_rows(await result(background, job)))
    assert [r["Date"] for r in rows] == ["2030-05-01T09:30:00+02:00"]


async def test_checkin_log_list_must_belong_to_event(clean_app, background, factory, world):
    scene = await build(factory, world)
    other = await h.checkin_list(factory, world.other_event, "Theirs")
    job = await _export(
        clean_app, scene, {"_format": "csv", "list": other.id}, identifier="checkinlog"
    )
    assert job.status == "failed" and "list" in job.message


@pytest.mark.parametrize("fmt,delimiter", [("default", ","), ("semicolon", ";")])
async def test_reference_csv_names(clean_app, background, factory, world, fmt, delimiter):
    scene = await build(factory, world)
    job = await _export(clean_app, scene, {"_format": fmt}, identifier="checkinlog")
    rows = csv_rows(await result(background, job), delimiter)
    assert rows[0][0] == "Date" and len(rows) == 2


# -- through the API -------------------------------------------------------------------------


async def test_run_and_download_through_the_api(client, background, factory, world):
    scene = await build(factory, world)
    base = f"/api/v1/organizers/{world.org.slug}/events/{world.event.slug}/exporters"
    listing = await client.get(f"{base}/", headers=auth(world.admin))
    assert listing.status_code == 200
    found = {d["identifier"]: d for d in listing.json()["results"]}
    assert {"checkinlist", "checkinlistpdf", "checkinlog", "quotalist", "voucherlist"} <= set(found)
    params = {p["name"]: p for p in found["checkinlist"]["input_parameters"]}
    assert params["list"]["required"] and "pdf" in params["_format"]["choices"]
    response = await client.post(
        f"{base}/checkinlist/run/",
        json={"_format": "xlsx", "list": scene.clist.id, "locale": "de"},
        headers=auth(world.admin),
    )
    assert response.status_code == 202, response.text
    url = response.json()["download"]
    assert url.startswith(f"http://testserver{base}/checkinlist/download/")
    done = await fetch_download(client, url, auth(world.admin))
    assert done.status_code == 200
    rows = by_header(xlsx_rows(done.content))
    assert len(rows) == 5 and "T-Shirt-Größe" in rows[0]
    assert {r["Bestellnummer"] for r in rows} >= {scene.codes["anna"], scene.codes["cjk"]}
    # Another credential of the same organizer does not get the file.
    assert (await client.get(url, headers=auth(world.nobody))).status_code in (403, 404)


BAD_LISTS = (
    {"_format": "xlsx"},
    {"_format": "xlsx", "list": "first"},
    {"_format": "xlsx", "list": 0},
    {"_format": "xlsx", "list": 2**40},
)


async def test_bad_input_through_the_api(client, background, factory, world):
    scene = await build(factory, world)
    base = f"/api/v1/organizers/{world.org.slug}/events/{world.event.slug}/exporters"
    for body in BAD_LISTS:
        response = await client.post(
            f"{base}/checkinlist/run/", json=body, headers=auth(world.admin)
        )
        assert_field_errors(response)
    response = await client.post(
        f"{base}/checkinlist/run/",
        json={"_format": "xlsx", "list": scene.clist.id, "sort": "shoe size"},
        headers=auth(world.admin),
    )
    assert_field_errors(response, "sort")
    # A list of another event: the run refuses it (the route validates the input's shape).
    other = await h.checkin_list(factory, world.other_event, "Theirs")
    response = await client.post(
        f"{base}/checkinlist/run/",
        json={"_format": "pdf", "list": other.id},
        headers=auth(world.admin),
    )
    if response.status_code == 400:  # the route asked the exporter's check_input
        assert_field_errors(response, "list")
        return
    assert response.status_code == 202
    failed = await fetch_download(client, response.json()["download"], auth(world.admin))
    assert failed.status_code == 410
    assert failed.json()["status"] == "failed" and "list" in failed.json()["message"]


async def test_bad_list_is_keyed_by_its_field(client, world):
    base = f"/api/v1/organizers/{world.org.slug}/events/{world.event.slug}/exporters"
    response = await client.post(
        f"{base}/checkinlist/run/", json=BAD_LISTS[1], headers=auth(world.admin)
    )
    assert_field_errors(response, "list")


async def test_rows_load_in_a_fixed_number_of_queries_per_chunk(
    clean_app, factory, world, count_queries
):
    scene = await build(factory, world)
    async with clean_app.state.db.sessionmaker() as session:
        clist = await session.get(CheckinList, scene.clist.id)
        info = await event_info(session, world.event.id)
        catalog = await load_catalog(session, world.event.id, "en", None)
        for size, chunks in ((2, 3), (500, 1)):
            with count_queries() as counted:
                groups = [g async for g in attendees(session, clist, info, catalog, Selection(),
                                                     size=size)]  # fmt: skip
            assert [len(g) for g in groups][:1] == [min(size, 5)] and len(groups) == chunks
            # One cursor; per chunk at most answers, chosen options, seats, vouchers, dates.
            assert counted.count <= 1 + 5 * chunks, counted.statements
