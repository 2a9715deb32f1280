"""The shop's languages: English (the texts as written in the templates) and German, from a
small catalogue of our own, keyed by the English text as gettext keys its messages.

A buyer sees German when the event's ``locales`` include ``de`` and the buyer picks it (the
switcher's ``?lang=de``, kept in the web session) or the event's default ``locale`` is German;
the checkout stores the language as the order's ``locale``, which the buyer's mails use.
A text missing from the catalogue is shown in English (never an empty string).
"""

from __future__ import annotations

from collections.abc import Callable

from admit.events.settings import value
from admit.models import Event
from admit.shop.i18n_accounts import ACCOUNTS

LANGUAGES = {"en": "English", "de": "Deutsch"}

GERMAN: dict[str, str] = {
    # layout
    "Skip to content": "Zum Inhalt springen",
    "Contact the organizer": "Veranstalter kontaktieren",
    "Imprint": "Impressum",
    "Tickets sold with Admit": "Tickets verkauft mit Admit",
    "Please check the following:": "Bitte prüfen Sie Folgendes:",
    "Language": "Sprache",
    # front page and dates
    "Tickets": "Tickets",
    "Choose a date": "Datum wählen",
    "Choose another date": "Anderes Datum wählen",
    "Tickets available": "Tickets verfügbar",
    "Sold out": "Ausverkauft",
    "Not on sale yet": "Noch nicht im Verkauf",
    "Sale ended": "Verkauf beendet",
    "No upcoming dates are on sale right now.": "Derzeit sind keine Termine im Verkauf.",
    "No tickets are on sale right now.": "Derzeit sind keine Tickets im Verkauf.",
    "Free": "Kostenlos",
    "from": "ab",
    "left": "übrig",
    "Quantity": "Anzahl",
    "Your price": "Ihr Preis",
    "at least": "mindestens",
    "Join the waiting list": "Auf die Warteliste",
    "Reserved by other buyers – try again in a few minutes": (
        "Von anderen Käufern reserviert – bitte versuchen Sie es in einigen Minuten erneut"
    ),
    "Voucher code": "Gutscheincode",
    "(optional)": "(optional)",
    "Add to cart": "In den Warenkorb",
    "Have a voucher?": "Haben Sie einen Gutschein?",
    "Show the prices and tickets of your voucher": ("Preise und Tickets Ihres Gutscheins anzeigen"),
    "Apply": "Anwenden",
    "Waiting list": "Warteliste",
    # cart and timer
    "Your cart": "Ihr Warenkorb",
    "Reserved for you until": "Für Sie reserviert bis",
    "minutes left": "Minuten übrig",
    "Your reservation ran out: whether the tickets are still available is checked again when "
    "you place the order.": (
        "Ihre Reservierung ist abgelaufen: Ob die Tickets noch verfügbar sind, wird bei der "
        "Bestellung erneut geprüft."
    ),
    "reservation ran out: checked again at checkout": (
        "Reservierung abgelaufen: wird bei der Bestellung erneut geprüft"
    ),
    "included": "inklusive",
    "add-on": "Zusatzprodukt",
    "voucher": "Gutschein",
    "Remove": "Entfernen",
    "Total": "Gesamt",
    "Go to checkout": "Zur Kasse",
    "Choose add-ons": "Zusatzprodukte wählen",
    # add-ons
    "Add-ons": "Zusatzprodukte",
    "Complete your tickets with these extras.": "Ergänzen Sie Ihre Tickets um diese Extras.",
    "Ticket": "Ticket",
    "Add": "Hinzufügen",
    "Included": "Inklusive",
    "Included in the ticket's price.": "Im Ticketpreis enthalten.",
    "Choose at least": "Wählen Sie mindestens",
    "at most": "höchstens",
    "Optional": "Optional",
    "up to": "bis zu",
    "Nothing to choose right now.": "Derzeit nichts zur Auswahl.",
    "Not available": "Nicht verfügbar",
    "Continue to checkout": "Weiter zur Kasse",
    # checkout
    "Checkout": "Kasse",
    "Your contact details": "Ihre Kontaktdaten",
    "E-mail address": "E-Mail-Adresse",
    "E-mail address (again)": "E-Mail-Adresse (wiederholen)",
    "We send your order confirmation, with the link to your tickets, to this address.": (
        "Wir senden Ihre Bestellbestätigung mit dem Link zu Ihren Tickets an diese Adresse."
    ),
    "Attendee name": "Name des Teilnehmers",
    "Attendee e-mail": "E-Mail des Teilnehmers",
    "– choose –": "– bitte wählen –",
    "Invoice address": "Rechnungsadresse",
    "I am buying as a business customer": "Ich kaufe als Geschäftskunde",
    "Company": "Firma",
    "(for business customers)": "(für Geschäftskunden)",
    "Name": "Name",
    "Street and number": "Straße und Hausnummer",
    "ZIP code": "Postleitzahl",
    "City": "Ort",
    "Country": "Land",
    "VAT ID": "USt-IdNr.",
    "(business customers in the EU)": "(Geschäftskunden in der EU)",
    "With a VAT ID from another EU country than the organizer's, the tickets are sold without "
    'VAT (reverse charge). Press "Update prices" to see the prices for your address.': (
        "Mit einer USt-IdNr. aus einem anderen EU-Land als dem des Veranstalters werden die "
        "Tickets ohne Umsatzsteuer verkauft (Reverse Charge). Drücken Sie „Preise "
        "aktualisieren“, um die Preise für Ihre Adresse zu sehen."
    ),
    "Update prices": "Preise aktualisieren",
    "Payment": "Zahlung",
    # payment methods and order fees (``payments/fees.py``)
    "Bank transfer": "Banküberweisung",
    "Payment fee": "Zahlungsgebühr",
    "Shipping fee": "Versandgebühr",
    "Service fee": "Servicegebühr",
    "Cancellation fee": "Stornogebühr",
    "Insurance": "Versicherung",
    "Late fee": "Säumnisgebühr",
    "Fee": "Gebühr",
    "payment fee": "Zahlungsgebühr",
    "total": "gesamt",
    "with the fee of the payment method chosen": "mit der Gebühr der gewählten Zahlungsart",
    "Gift card code": "Geschenkgutschein-Code",
    "(if you pay with a gift card)": "(wenn Sie mit einem Geschenkgutschein zahlen)",
    "This shop offers no way to pay right now. Please contact the organizer.": (
        "Dieser Shop bietet derzeit keine Zahlungsart an. Bitte kontaktieren Sie den Veranstalter."
    ),
    "Your order is free of charge.": "Ihre Bestellung ist kostenlos.",
    "I accept the": "Ich akzeptiere die",
    "terms of sale": "Verkaufsbedingungen",
    "Reverse charge: the VAT is owed by you as the recipient of the service.": (
        "Reverse Charge: Die Umsatzsteuer schuldet der Leistungsempfänger."
    ),
    "Place binding order": "Zahlungspflichtig bestellen",
    "Get my tickets": "Tickets erhalten",
    "Back to the tickets": "Zurück zu den Tickets",
    # order page
    "Your order": "Ihre Bestellung",
    "We sent the link to this page to": "Wir haben den Link zu dieser Seite gesendet an",
    "Keep it: it is the way to your order and tickets.": (
        "Bewahren Sie ihn auf: Er führt zu Ihrer Bestellung und Ihren Tickets."
    ),
    "canceled": "storniert",
    "Ticket PDF": "Ticket (PDF)",
    "Download all tickets (PDF)": "Alle Tickets herunterladen (PDF)",
    "Your tickets can be downloaded here once the payment has arrived.": (
        "Ihre Tickets können Sie hier herunterladen, sobald die Zahlung eingegangen ist."
    ),
    "Back to the shop": "Zurück zum Shop",
    "Order": "Bestellung",
    "Invoices": "Rechnungen",
    "Download (PDF)": "Herunterladen (PDF)",
    "Request an invoice": "Rechnung anfordern",
    "Cancel this order": "Diese Bestellung stornieren",
    "Cancel order": "Bestellung stornieren",
    "Pending payment": "Zahlung ausstehend",
    "Paid": "Bezahlt",
    "Expired": "Abgelaufen",
    "Canceled": "Storniert",
    # the labels of refusals (``pages.sentences``)
    "E-mail": "E-Mail",
    "E-mail (again)": "E-Mail (wiederholen)",
    "Terms": "Bedingungen",
    "Gift card": "Geschenkgutschein",
    "Voucher": "Gutschein",
    "Price": "Preis",
    "Date": "Datum",
    # sentences from the services (shown in the page's error box)
    "This field is required.": "Dieses Feld ist erforderlich.",
    "Choose a date first.": "Bitte wählen Sie zuerst ein Datum.",
    "Choose how many tickets you want first.": "Bitte wählen Sie zuerst die Anzahl der Tickets.",
    "The two e-mail addresses differ.": "Die beiden E-Mail-Adressen stimmen nicht überein.",
    "Enter a valid email address.": "Bitte geben Sie eine gültige E-Mail-Adresse ein.",
    "Please accept the terms of sale.": "Bitte akzeptieren Sie die Verkaufsbedingungen.",
    "This VAT ID does not look valid for the chosen country.": (
        "Diese USt-IdNr. ist für das gewählte Land nicht gültig."
    ),
    "Added to your cart. Your tickets are reserved for 30 minutes.": (
        "Zum Warenkorb hinzugefügt. Ihre Tickets sind 30 Minuten für Sie reserviert."
    ),
    "Thank you! Your order has been placed.": "Vielen Dank! Ihre Bestellung ist eingegangen.",
    "Thank you! Your order is complete.": "Vielen Dank! Ihre Bestellung ist abgeschlossen.",
    # file questions
    "Uploaded:": "Hochgeladen:",
    "Choose another file to replace it.": "Wählen Sie eine andere Datei, um sie zu ersetzen.",
    "PDF, PNG, JPEG or GIF, at most 10 MB.": "PDF, PNG, JPEG oder GIF, höchstens 10 MB.",
    "uploaded": "hochgeladen",
    "The file must be a PDF, PNG, JPEG or GIF file.": (
        "Die Datei muss eine PDF-, PNG-, JPEG- oder GIF-Datei sein."
    ),
    "The file is too large: at most 10 MB.": "Die Datei ist zu groß: höchstens 10 MB.",
    "The file is empty.": "Die Datei ist leer.",
    "The file's name does not fit its type.": "Der Dateiname passt nicht zum Dateityp.",
    "The shop cannot take more files right now; please try again later.": (
        "Der Shop kann gerade keine weiteren Dateien annehmen; bitte versuchen Sie es später."
    ),
    # the order page's forms (details and answers, gift card)
    "Attendee details and answers": "Teilnehmerdaten und Antworten",
    "You can change these details until": "Sie können diese Angaben ändern bis",
    "Please contact the organizer for changes.": (
        "Für Änderungen wenden Sie sich bitte an den Veranstalter."
    ),
    "Save changes": "Änderungen speichern",
    "Your changes have been saved.": "Ihre Änderungen wurden gespeichert.",
    "Your changes were not saved: please check the marked fields.": (
        "Ihre Änderungen wurden nicht gespeichert: bitte prüfen Sie die markierten Felder."
    ),
    "This order can no longer be changed.": "Diese Bestellung kann nicht mehr geändert werden.",
    # the order page's invoice address form
    "Change the invoice address": "Rechnungsadresse ändern",
    "Save the invoice address": "Rechnungsadresse speichern",
    "Your invoice address has been saved.": "Ihre Rechnungsadresse wurde gespeichert.",
    "The invoice address is unchanged.": "Die Rechnungsadresse ist unverändert.",
    "Your invoice address was not saved: please check the marked fields.": (
        "Ihre Rechnungsadresse wurde nicht gespeichert: bitte prüfen Sie die markierten Felder."
    ),
    "The prices of a placed order stay as they are: an address that would change its taxes "
    "is refused here.": (
        "Die Preise einer Bestellung bleiben, wie sie sind: eine Adresse, die ihre Steuern "
        "ändern würde, wird hier abgelehnt."
    ),
    "This address would change the taxes of your order, so it can not be changed here. "
    "Please contact the organizer.": (
        "Mit dieser Adresse würden sich die Steuern Ihrer Bestellung ändern, daher kann sie "
        "hier nicht geändert werden. Bitte wenden Sie sich an den Veranstalter."
    ),
    "A ticket of this order has been used for entry: it can no longer be changed here.": (
        "Ein Ticket dieser Bestellung wurde schon zum Einlass genutzt: sie kann hier nicht "
        "mehr geändert werden."
    ),
    "Pay with a gift card": "Mit einem Geschenkgutschein bezahlen",
    "Pay with gift card": "Mit Geschenkgutschein bezahlen",
    "The card pays what it holds; any rest stays to be paid as shown above.": (
        "Der Gutschein zahlt sein Guthaben; ein Rest bleibt wie oben angegeben zu zahlen."
    ),
    "Your gift card paid %s: your order is paid.": (
        "Ihr Geschenkgutschein hat %s gezahlt: Ihre Bestellung ist bezahlt."
    ),
    "Your gift card paid %s; %s remain to be paid.": (
        "Ihr Geschenkgutschein hat %s gezahlt; %s sind noch zu zahlen."
    ),
    "This gift card has no credit left.": "Dieser Geschenkgutschein hat kein Guthaben mehr.",
    "This gift card has expired.": "Dieser Geschenkgutschein ist abgelaufen.",
    "Enter the code of your gift card.": "Bitte geben Sie den Code Ihres Geschenkgutscheins ein.",
    "This gift card does not exist or is not accepted by this organizer.": (
        "Diesen Geschenkgutschein gibt es nicht, oder dieser Veranstalter nimmt ihn nicht an."
    ),
    **ACCOUNTS,
}

CATALOGUES = {"de": GERMAN}


def offered(event: Event) -> list[str]:
    """The shop languages the event offers, English first."""
    codes = [str(c).split("-")[0] for c in value(event, "locales") or ["en"]]
    return [c for c in LANGUAGES if c in codes] or ["en"]


def choose(event: Event, asked: str | None, remembered: str | None) -> str:
    """The page's language: the one asked for (``?lang=``), else the one the buyer picked
    before, else the event's default, when the event offers it; English otherwise."""
    choices = offered(event)
    default = str(value(event, "locale") or "en").split("-")[0]
    for code in (asked, remembered, default):
        if code in choices:
            return code  # type: ignore[return-value]
    return "en"


def translator(locale: str | None) -> Callable[[str], str]:
    """``_(text)`` for ``locale``: the catalogue's text, else the English one."""
    catalogue = CATALOGUES.get((locale or "en").split("-")[0], {})
    return lambda text: catalogue.get(text, text)
