"""A real browser (Debian's headless Chromium driven by Selenium through chromedriver) signs in,
sees the consent page with the client's name and logo, approves, and lands on the redirect URI
with code and state. With INLET_SCREENSHOT=path the consent page is saved as a PNG.
"""

import os
import shutil
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import parse_qs, urlencode, urlparse

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from conftest import ADMIN_EMAIL, ADMIN_PASSWORD, LOGO_PNG, free_port

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")


class Callback(BaseHTTPRequestHandler):
    """The client application's redirect target."""

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(b"<html><body><h1>Acme is connected</h1></body></html>")

    def log_message(self, *args):
        pass


@pytest.fixture
def app_server():
    port = free_port()
    server = HTTPServer(("127.0.0.1", port), Callback)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{port}/callback"
    server.shutdown()


@pytest.fixture
def browser():
    if not (shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER)):
        if os.environ.get("INLET_REQUIRE_BROWSER") == "1":
            pytest.fail("chromium and chromedriver are required (apt-get install chromium chromium-driver)")
        pytest.skip("chromium/chromedriver not installed")
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=760,900", "--force-device-scale-factor=1"]:
        opts.add_argument(arg)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    yield driver
    driver.quit()


def test_login_consent_and_redirect_in_chromium(inlet, app_server, browser):
    client = inlet.create_client(["default", "read:*"], [app_server], name="Acme Drive Sync")
    inlet.upload_logo(client["clientId"], LOGO_PNG)
    params = {
        "client_id": client["clientId"],
        "response_type": "code",
        "redirect_uri": app_server,
        "scope": "default",
        "state": "st-42",
    }
    browser.get(f"{inlet.base}/oauth/authorize?{urlencode(params)}")
    assert "Acme Drive Sync" in browser.page_source
    browser.find_element(By.NAME, "email").send_keys(ADMIN_EMAIL)
    browser.find_element(By.NAME, "password").send_keys(ADMIN_PASSWORD)
    browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    WebDriverWait(browser, 10).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "button[value=approve]")
    )

    # The consent page: name, description, bottom text, the logo really loaded, the scopes.
    heading = browser.find_element(By.TAG_NAME, "h1").text
    assert heading == "Acme Drive Sync"
    body = browser.find_element(By.TAG_NAME, "body").text
    assert "Keeps your Acme files in sync with Inlet." in body
    assert "Privacy policy" in body
    assert "Read and write your sources and records" in body
    logo = browser.find_element(By.CSS_SELECTOR, ".app img")
    assert browser.execute_script("return arguments[0].complete && arguments[0].naturalWidth", logo) == 64
    shot = os.environ.get("INLET_SCREENSHOT")
    if shot:
        browser.save_screenshot(shot)

    browser.find_element(By.CSS_SELECTOR, "button[value=approve]").click()
    WebDriverWait(browser, 10).until(lambda d: d.current_url.startswith(app_server))
    landed = urlparse(browser.current_url)
    assert f"{landed.scheme}://{landed.netloc}{landed.path}" == app_server
    q = parse_qs(landed.query)
    assert q["state"] == ["st-42"]
    assert len(q["code"][0]) == 64
    assert "Acme is connected" in browser.page_source
