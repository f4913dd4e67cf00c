"""The whole OAuth2 flow with Authlib's OAuth2Session as the client application.

The user's browser is played by a requests.Session that posts the login and consent forms.
Token requests run once as form bodies (RFC 6749, Authlib's default) and once with every
parameter in the query string (as the service spec shows), through a custom Authlib client
authentication method.
"""

import re
from urllib.parse import parse_qs, urlencode, urlparse

import pytest
import requests
from authlib.integrations.requests_client import OAuth2Session
from authlib.integrations.base_client.errors import OAuthError

from conftest import ADMIN_EMAIL, ADMIN_PASSWORD

REDIRECT = "https://app.example.test/callback"


def query_string_auth(auth, method, uri, headers, body):
    """Moves the whole token request (client credentials included) into the query string."""
    params = parse_qs(body or "", keep_blank_values=True)
    flat = {k: v[0] for k, v in params.items()}
    flat["client_id"] = auth.client_id
    flat["client_secret"] = auth.client_secret
    sep = "&" if "?" in uri else "?"
    # The body moves into the URL: drop its type and length too, or the connection's framing
    # breaks for the next request.
    headers = {
        k: v for k, v in headers.items() if k.lower() not in ("content-type", "content-length")
    }
    return uri + sep + urlencode(flat), headers, ""


def browser_approve(inlet, authorize_url: str, decision: str = "approve") -> str:
    """Logs in and answers the consent page; returns the redirect Location."""
    browser = requests.Session()
    page = browser.get(authorize_url, allow_redirects=False)
    assert page.status_code == 200 and 'name="password"' in page.text
    query = parse_qs(urlparse(authorize_url).query)
    fields = {k: v[0] for k, v in query.items()}
    login = browser.post(
        f"{inlet.base}/oauth/authorize",
        data={
            **fields,
            "step": "login",
            "email": ADMIN_EMAIL,
            "password": ADMIN_PASSWORD,
            # The sign-in form's anti-forgery token, bound to the pre-login cookie the page set.
            "login_token": re.search(r'name="login_token" value="([^"]+)"', page.text).group(1),
        },
        allow_redirects=False,
    )
    assert login.status_code == 303, login.text
    consent = browser.get(inlet.base + login.headers["Location"], allow_redirects=False)
    assert consent.status_code == 200
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', consent.text).group(1)
    answer = browser.post(
        f"{inlet.base}/oauth/authorize",
        data={**fields, "step": "consent", "csrf_token": csrf, "decision": decision},
        allow_redirects=False,
    )
    assert answer.status_code == 303
    return answer.headers["Location"]


def session_for(inlet, client, scope, style):
    s = OAuth2Session(
        client["clientId"],
        client["clientSecret"],
        scope=scope,
        redirect_uri=REDIRECT,
        code_challenge_method="S256",
    )
    if style == "query":
        s.register_client_auth_method(("query_string", query_string_auth))
        s.token_endpoint_auth_method = "query_string"
    return s


@pytest.mark.parametrize("style", ["form", "query"])
def test_code_flow_refresh_twice_and_scopes(inlet, style):
    client = inlet.create_client(["default"], [REDIRECT])
    oauth = session_for(inlet, client, "default", style)
    verifier = "v" * 20 + "-pkce-verifier-0123456789abcdefghij"
    url, state = oauth.create_authorization_url(
        f"{inlet.base}/oauth/authorize", code_verifier=verifier
    )
    location = browser_approve(inlet, url)
    assert parse_qs(urlparse(location).query)["state"] == [state]
    token = oauth.fetch_token(
        f"{inlet.base}/oauth/token",
        authorization_response=location,
        code_verifier=verifier,
    )
    assert token["token_type"].lower() == "bearer"
    assert token["scope"] == "default"
    assert token["user_id"] == ADMIN_EMAIL
    assert token["expires_in"] == 3599
    refresh = token["refresh_token"]

    # The token works for reads and writes.
    first = oauth.get(inlet.api("/sources"))
    assert first.status_code == 200, first.text
    made = oauth.post(
        inlet.api("/sources"),
        json={
            "definition": {"type": "CUSTOM"},
            "externalId": f"authlib-{style}",
            "config": {
                "type": "CUSTOM",
                "name": "Files",
                "trackStatus": True,
                "specification": {"application": {"objectTypes": [{
                    "name": "Docs", "externalId": "docs", "sourceDataType": "RECORD",
                    "fields": [], "tagConfigs": [], "facets": [],
                }]}},
            },
        },
    )
    assert made.status_code == 201, made.text

    # Refresh twice with the same refresh token; the response carries no new refresh token.
    seen = {token["access_token"]}
    for _ in range(2):
        raw = requests.post(
            f"{inlet.base}/oauth/token",
            data={"grant_type": "refresh_token", "refresh_token": refresh},
            auth=(client["clientId"], client["clientSecret"]),
        ) if style == "form" else requests.post(
            f"{inlet.base}/oauth/token?" + urlencode({
                "client_id": client["clientId"], "grant_type": "refresh_token",
                "refresh_token": refresh, "client_secret": client["clientSecret"],
            })
        )
        assert raw.status_code == 200, raw.text
        body = raw.json()
        assert "refresh_token" not in body
        assert body["access_token"] not in seen
        seen.add(body["access_token"])
        new = oauth.refresh_token(f"{inlet.base}/oauth/token", refresh_token=refresh)
        assert new["access_token"] not in seen
        seen.add(new["access_token"])
        assert oauth.get(inlet.api("/sources")).status_code == 200


def test_read_scope_is_enforced(inlet):
    client = inlet.create_client(["default"], [REDIRECT])
    oauth = session_for(inlet, client, "read:*", "form")
    url, _ = oauth.create_authorization_url(f"{inlet.base}/oauth/authorize")
    location = browser_approve(inlet, url)
    token = oauth.fetch_token(f"{inlet.base}/oauth/token", authorization_response=location)
    assert token["scope"] == "read:*"
    assert oauth.get(inlet.api("/sources")).status_code == 200
    denied = oauth.post(inlet.api("/sources"), json={})
    assert denied.status_code == 403
    assert denied.headers["content-type"] == "application/problem+json"

    # A scope wider than the client's is refused at the authorization step.
    narrow = inlet.create_client(["read:*"], [REDIRECT])
    wide = session_for(inlet, narrow, "default", "form")
    url, state = wide.create_authorization_url(f"{inlet.base}/oauth/authorize")
    resp = requests.get(url, allow_redirects=False)
    assert resp.status_code == 303
    q = parse_qs(urlparse(resp.headers["Location"]).query)
    assert q["error"] == ["invalid_scope"] and q["state"] == [state]


def test_denial_and_client_deletion_revoke_everything(inlet):
    client = inlet.create_client(["default"], [REDIRECT])
    oauth = session_for(inlet, client, "default", "form")
    url, state = oauth.create_authorization_url(f"{inlet.base}/oauth/authorize")
    denied = browser_approve(inlet, url, decision="deny")
    q = parse_qs(urlparse(denied).query)
    assert q["error"] == ["access_denied"] and q["state"] == [state]

    url, _ = oauth.create_authorization_url(f"{inlet.base}/oauth/authorize")
    token = oauth.fetch_token(
        f"{inlet.base}/oauth/token", authorization_response=browser_approve(inlet, url)
    )
    assert oauth.get(inlet.api("/sources")).status_code == 200
    gone = inlet.admin.delete(inlet.api(f"/oauthclients/{client['clientId']}"))
    assert gone.status_code == 204
    after = oauth.get(inlet.api("/sources"))
    assert after.status_code == 401
    assert 'error="invalid_token"' in after.headers["WWW-Authenticate"]
    with pytest.raises(OAuthError) as err:
        oauth.refresh_token(f"{inlet.base}/oauth/token", refresh_token=token["refresh_token"])
    assert err.value.error == "invalid_client"


def test_server_metadata_is_usable(inlet):
    meta = requests.get(f"{inlet.base}/.well-known/oauth-authorization-server").json()
    assert meta["issuer"] == inlet.base
    assert meta["token_endpoint"] == f"{inlet.base}/oauth/token"
    assert "S256" in meta["code_challenge_methods_supported"]
