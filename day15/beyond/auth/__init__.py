"""OAuth 2.1 for the HTTP transport, as MCP has it: a remote server that answers 401 is logged in to.

  provider.py  one server's login: its tokens, refreshed and replaced
  clients.py   who the agent is to an authorization server: the entry's client, or a registration
  metadata.py  the server's and its authorization server's metadata, and the requests to them
  login.py     the login itself: PKCE, state, the browser or a pasted address, iss
  grants.py    logins without a person: client credentials, workload identity (JWT bearer), enterprise
  dpop.py      tokens bound to a key of the login (DPoP): a proof with every token request and call
  es256.py     ES256 signatures (P-256) in the standard library, and reading a key file
  screen.py    where a login meets the user: a browser or not, the console to paste into
  tokens.py    the logins file, locked across agents
  outbound.py  where a login may go: the one check for every URL a login opens or fetches
  errors.py    AuthError, and LoginNeeded, which reaches the caller as itself
"""
