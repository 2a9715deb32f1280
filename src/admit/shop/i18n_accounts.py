"""The German texts of the customer account's pages, its part of the checkout and its
refusals (``i18n.py`` merges them into the shop's catalogue)."""

ACCOUNTS: dict[str, str] = {
    # customer accounts (``account_pages.py``, ``account_home.py``, the checkout's part)
    "Your account": "Ihr Konto",
    "Create an account": "Konto erstellen",
    "With an account you see all your orders in one place and can use your memberships when "
    "you buy tickets.": (
        "Mit einem Konto sehen Sie alle Ihre Bestellungen an einem Ort und können beim "
        "Ticketkauf Ihre Mitgliedschaften nutzen."
    ),
    "Your name": "Ihr Name",
    "We send you a link to this address to choose your password.": (
        "Wir senden Ihnen an diese Adresse einen Link, mit dem Sie Ihr Passwort wählen."
    ),
    "Create account": "Konto erstellen",
    "Already have an account?": "Sie haben schon ein Konto?",
    "Log in": "Anmelden",
    "Log out": "Abmelden",
    "Check your mailbox": "Sehen Sie in Ihr Postfach",
    "We have sent a mail to %s. Open the link in it to choose your password; then you can "
    "log in.": (
        "Wir haben eine E-Mail an %s gesendet. Öffnen Sie den Link darin, um Ihr Passwort zu "
        "wählen; danach können Sie sich anmelden."
    ),
    "No mail after a few minutes? Look in your spam folder, or ask for a new link:": (
        "Nach einigen Minuten noch keine E-Mail? Sehen Sie im Spam-Ordner nach oder fordern "
        "Sie einen neuen Link an:"
    ),
    "Forgot your password?": "Passwort vergessen?",
    "Back to your account": "Zurück zu Ihrem Konto",
    "Please wait": "Bitte warten",
    "Log in to your account": "Bei Ihrem Konto anmelden",
    "Password": "Passwort",
    "No account yet?": "Noch kein Konto?",
    "If an account with this address exists, we have sent it a link to choose a new password. "
    "The link works for two hours.": (
        "Falls es ein Konto mit dieser Adresse gibt, haben wir ihm einen Link zum Wählen eines "
        "neuen Passworts gesendet. Der Link funktioniert zwei Stunden lang."
    ),
    "Back to the login": "Zurück zur Anmeldung",
    "Enter the e-mail address of your account: we send you a link to choose a new password.": (
        "Geben Sie die E-Mail-Adresse Ihres Kontos ein: Wir senden Ihnen einen Link, mit dem "
        "Sie ein neues Passwort wählen."
    ),
    "Send the link": "Link senden",
    "Choose your password": "Passwort wählen",
    "For your account": "Für Ihr Konto",
    "New password": "Neues Passwort",
    "New password (again)": "Neues Passwort (wiederholen)",
    "At least 8 characters.": "Mindestens 8 Zeichen.",
    "Save password": "Passwort speichern",
    "Customer number": "Kundennummer",
    "Your orders": "Ihre Bestellungen",
    "You have no orders here yet.": "Sie haben hier noch keine Bestellungen.",
    "Your memberships": "Ihre Mitgliedschaften",
    "Valid": "Gültig",
    "Used": "Genutzt",
    "of": "von",
    "valid": "gültig",
    "not valid now": "derzeit nicht gültig",
    "test mode": "Testmodus",
    "You have no memberships.": "Sie haben keine Mitgliedschaften.",
    "Your details": "Ihre Angaben",
    "Save name": "Name speichern",
    "Current password": "Aktuelles Passwort",
    "Change password": "Passwort ändern",
    "Your password has been set. You are logged in.": (
        "Ihr Passwort wurde gespeichert. Sie sind angemeldet."
    ),
    "You are logged out.": "Sie sind abgemeldet.",
    "Your name has been saved.": "Ihr Name wurde gespeichert.",
    "Your password has been changed.": "Ihr Passwort wurde geändert.",
    "Too many attempts. Please try again in %s minute(s).": (
        "Zu viele Versuche. Bitte versuchen Sie es in %s Minute(n) erneut."
    ),
    "Wrong e-mail address or password. If you have just signed up, set your password with "
    "the link in our mail first.": (
        "E-Mail-Adresse oder Passwort falsch. Wenn Sie sich gerade registriert haben, legen "
        "Sie zuerst mit dem Link aus unserer E-Mail Ihr Passwort fest."
    ),
    "This link is not valid (any more). Ask for a new one below.": (
        "Dieser Link ist (nicht mehr) gültig. Fordern Sie unten einen neuen an."
    ),
    "Please enter your name.": "Bitte geben Sie Ihren Namen ein.",
    "Please enter your e-mail address.": "Bitte geben Sie Ihre E-Mail-Adresse ein.",
    "The name may have at most 255 characters.": "Der Name darf höchstens 255 Zeichen haben.",
    "Your current password is not correct.": "Ihr aktuelles Passwort ist nicht richtig.",
    "The password must have at least 8 characters.": (
        "Das Passwort muss mindestens 8 Zeichen haben."
    ),
    "The password is too long.": "Das Passwort ist zu lang.",
    "The password may not contain null characters.": (
        "Das Passwort darf keine Nullzeichen enthalten."
    ),
    "The two passwords do not match.": "Die beiden Passwörter stimmen nicht überein.",
    "You are logged in as": "Sie sind angemeldet als",
    "This order will be saved in your account.": (
        "Diese Bestellung wird in Ihrem Konto gespeichert."
    ),
    "Log in to see this order in your account and to use your memberships, or continue as a "
    "guest below.": (
        "Melden Sie sich an, um diese Bestellung in Ihrem Konto zu sehen und Ihre "
        "Mitgliedschaften zu nutzen, oder fahren Sie unten als Gast fort."
    ),
    "Membership": "Mitgliedschaft",
    "Customer account": "Kundenkonto",
    "This ticket requires a membership: it is sold against the one you choose.": (
        "Dieses Ticket erfordert eine Mitgliedschaft: Es wird auf die von Ihnen gewählte verkauft."
    ),
    "This ticket requires a membership, and none of yours is valid for it.": (
        "Dieses Ticket erfordert eine Mitgliedschaft, und keine Ihrer Mitgliedschaften ist "
        "dafür gültig."
    ),
    "This ticket requires a membership: please": (
        "Dieses Ticket erfordert eine Mitgliedschaft: bitte"
    ),
    "log in to your account": "melden Sie sich bei Ihrem Konto an",
    "to use it.": "um sie zu nutzen.",
    "This ticket requires a membership, which this shop cannot check online. Please contact "
    "the organizer.": (
        "Dieses Ticket erfordert eine Mitgliedschaft, die dieser Shop nicht online prüfen kann. "
        "Bitte wenden Sie sich an den Veranstalter."
    ),
    "Requires a membership": "Erfordert eine Mitgliedschaft",
    "log in to use yours": "melden Sie sich an, um Ihre zu nutzen",
    "Ticket %s (%s) requires a membership: please log in to your account to use it.": (
        "Ticket %s (%s) erfordert eine Mitgliedschaft: Bitte melden Sie sich bei Ihrem Konto "
        "an, um sie zu nutzen."
    ),
    "Ticket %s (%s) requires a membership: please choose one of yours.": (
        "Ticket %s (%s) erfordert eine Mitgliedschaft: Bitte wählen Sie eine Ihrer "
        "Mitgliedschaften."
    ),
    "Ticket %s (%s) requires a membership, and none of yours is valid for it.": (
        "Ticket %s (%s) erfordert eine Mitgliedschaft, und keine Ihrer Mitgliedschaften ist "
        "dafür gültig."
    ),
    "Ticket %s (%s) requires a membership, which this shop cannot check online.": (
        "Ticket %s (%s) erfordert eine Mitgliedschaft, die dieser Shop nicht online prüfen kann."
    ),
}
