"""The OAuth 2 provider: Authlib's RFC 6749 / 7636 / 7009 server core with Starlette glue,
its storage, Bearer authentication and the application management shared by CLI and pages."""
