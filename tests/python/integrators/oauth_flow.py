"""The OAuth2 authorization-code flow with PKCE, as a browser and an application run it against a
real server: shared by the integrators' scripts that need a code or tokens."""

import base64
import hashlib
import re
import secrets
from urllib.parse import parse_qs, urlparse

import requests


def approve(base, email, password, client_id, redirect_uri, scope="default", state="xyz"):
    """Signs in on /oauth/authorize and approves; returns (authorize fields, code, verifier)."""
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    fields = {"response_type": "code", "client_id": client_id, "redirect_uri": redirect_uri, "scope": scope,
              "state": state, "code_challenge": challenge, "code_challenge_method": "S256"}
    browser = requests.Session()
    page = browser.get(f"{base}/oauth/authorize", params=fields)
    assert page.status_code == 200, page.text
    # The sign-in form's anti-forgery token, bound to the pre-login cookie the page set.
    token = re.search(r'name="login_token" value="([^"]+)"', page.text).group(1)
    login = browser.post(f"{base}/oauth/authorize", data={**fields, "step": "login", "email": email,
                                                          "password": password, "login_token": token},
                         allow_redirects=False)
    assert login.status_code == 303, login.text
    consent = browser.get(base + login.headers["Location"], allow_redirects=False)
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', consent.text).group(1)
    answer = browser.post(f"{base}/oauth/authorize", data={**fields, "step": "consent", "csrf_token": csrf,
                                                           "decision": "approve"}, allow_redirects=False)
    assert answer.status_code == 303, answer.text
    code = parse_qs(urlparse(answer.headers["Location"]).query)["code"][0]
    return fields, code, verifier
