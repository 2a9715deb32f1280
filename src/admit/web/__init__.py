"""The pages a person sees: login (with a second factor), logout, settings with authorized and
own OAuth applications, password change and reset, team invitations, and the OAuth consent
page. Server-rendered with Jinja2, one stylesheet served by the app, no scripts from
elsewhere."""
