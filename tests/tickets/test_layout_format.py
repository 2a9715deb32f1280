"""The layout format on its own: what normalized_elements gives the renderer, what fails."""

from __future__ import annotations

import pytest

from admit.kit.pdf.fonts import families
from admit.tickets.layout_format import (
    A4_MM,
    MAX_ELEMENTS,
    LayoutContext,
    LayoutError,
    check_layout,
    normalized_elements,
)

# As the reference's editor writes them: numbers as strings, its own font names.
REFERENCE_LAYOUT = [
    {"type": "textarea", "left": "17.50", "bottom": "274.60", "fontsize": "16.0",
     "color": [0, 0, 0, 1], "fontfamily": "Open Sans", "bold": True, "italic": False,
     "width": "175.00", "content": "event_name", "text": "Sample event name", "align": "left"},
    {"type": "barcodearea", "left": "130.40", "bottom": "204.50", "size": "64.00"},
    {"type": "poweredby", "left": "88.72", "bottom": "10.00", "size": "20.00", "content": "dark"},
    {"type": "imagearea", "left": 10, "bottom": 10, "width": 30, "height": 20,
     "content": "item_picture"},
    {"type": "textarea", "left": 10, "bottom": 100, "width": 50, "content": "other_i18n",
     "text_i18n": {"en": "Hello", "de": "Hallo"}, "fontfamily": "Droid Serif",
     "rotation": -90, "downward": True, "lineheight": "1.5", "align": "center",
     "color": [255, 0, 10], "editor_only": "ignored"},
]  # fmt: skip


def test_normalized_elements_fill_every_key_with_its_type():
    elements = normalized_elements(REFERENCE_LAYOUT)
    assert elements[0] == {
        "index": 0, "type": "textarea", "page": 1, "left": 17.5, "bottom": 274.6,
        "width": 175.0, "content": "event_name", "text": "Sample event name", "text_i18n": {},
        "locale": None, "fontfamily": "Noto Sans", "fontsize": 16.0, "lineheight": 1.0,
        "bold": True, "italic": False, "align": "left", "color": [0, 0, 0, 1.0],
        "rotation": 0.0, "downward": False,
    }  # fmt: skip
    assert elements[1] == {
        "index": 1, "type": "barcodearea", "page": 1, "left": 130.4, "bottom": 204.5,
        "size": 64.0, "content": "secret", "text": "", "text_i18n": {}, "nowhitespace": False,
    }  # fmt: skip
    assert elements[2] == {
        "index": 2, "type": "poweredby", "page": 1, "left": 88.72, "bottom": 10.0,
        "size": 20.0, "content": "dark",
    }  # fmt: skip
    assert elements[3] == {
        "index": 3, "type": "imagearea", "page": 1, "left": 10.0, "bottom": 10.0,
        "width": 30.0, "height": 20.0, "content": "item_picture",
    }  # fmt: skip
    fifth = elements[4]
    assert fifth["content"] == "other"
    assert fifth["text_i18n"] == {"en": "Hello", "de": "Hallo"}
    assert fifth["fontfamily"] == "PT Serif"
    assert fifth["rotation"] == 270.0
    assert fifth["color"] == [255, 0, 10, 1.0]
    assert (fifth["downward"], fifth["lineheight"], fifth["align"]) == (True, 1.5, "center")
    assert "editor_only" not in fifth
    for element in elements:
        assert all(isinstance(element[k], float) for k in ("left", "bottom"))
        assert element["fontfamily"] in families() if "fontfamily" in element else True


def test_plain_other_keeps_text_and_drops_translations():
    (element,) = normalized_elements(
        [{"type": "textarea", "left": 1, "bottom": 1, "width": 5, "content": "other",
          "text": "Hi {attendee_name}", "text_i18n": {"en": "unused"}}]
    )  # fmt: skip
    assert (element["content"], element["text"], element["text_i18n"]) == (
        "other",
        "Hi {attendee_name}",
        {},
    )


def test_questions_are_checked_only_when_known():
    layout = [{"type": "textarea", "left": 1, "bottom": 1, "width": 5, "content": "question_DIET"}]
    assert normalized_elements(layout)[0]["content"] == "question_DIET"
    check_layout(layout, LayoutContext(questions={"DIET"}))
    with pytest.raises(LayoutError) as failed:
        check_layout(layout, LayoutContext(questions={"WHY"}))
    assert failed.value.messages == [
        'Element 0: "content" names no question of this event: "question_DIET".'
    ]


def test_positions_are_checked_against_the_page():
    wide = [{"type": "barcodearea", "left": 380, "bottom": 250, "size": 30}]
    with pytest.raises(LayoutError) as failed:
        check_layout(wide, LayoutContext())
    assert failed.value.messages == [
        'Element 0: "left" (380 mm) lies outside the page (0 to 210.0 mm).'
    ]
    check_layout(wide, LayoutContext(pages=[(420.0, 297.0)]))  # A3 landscape
    normalized_elements(wide)  # positions are the writer's business, not the renderer's
    edge = [{"type": "imagearea", "left": 190, "bottom": 10, "width": 30, "height": 10,
             "content": "item_picture"}]  # fmt: skip
    with pytest.raises(LayoutError, match=r"ends 10\.0 mm beyond the page"):
        check_layout(edge, LayoutContext())
    second_page = [{"type": "barcodearea", "left": 10, "bottom": 10, "size": 30, "page": 2}]
    with pytest.raises(LayoutError, match='"page" is 2'):
        check_layout(second_page, LayoutContext())
    check_layout(second_page, LayoutContext(pages=[A4_MM, A4_MM]))


def test_messages_name_each_bad_element_and_stop_at_a_limit():
    layout = [{"type": "poweredby", "left": 1, "bottom": 1, "size": 10}] * 3 + [{"type": "x"}] * 80
    with pytest.raises(LayoutError) as failed:
        check_layout(layout, LayoutContext())
    messages = failed.value.messages
    assert messages[0].startswith('Element 3: unknown type ("x")')
    assert len(messages) == 51 and messages[-1] == "More problems were not listed."


def test_size_limits():
    element = {"type": "poweredby", "left": 1, "bottom": 1, "size": 10}
    check_layout([element] * MAX_ELEMENTS, LayoutContext())
    with pytest.raises(LayoutError, match="at most 500 elements"):
        check_layout([element] * (MAX_ELEMENTS + 1), LayoutContext())
    big = [{**element, "padding": "x" * 1_000_000}]
    with pytest.raises(LayoutError, match="at most 1,000,000 bytes"):
        check_layout(big, LayoutContext())
