"""'Sign in with your AI agent' in a Flask site with Authlib's Flask client.

    pip install flask authlib requests   (Debian: apt-get install python3-flask python3-authlib python3-requests)

    AGENTAUTH_ISSUER=https://auth.example.com AGENTAUTH_CLIENT_ID=cli_... AGENTAUTH_CLIENT_SECRET=cls_... \
    FLASK_SECRET_KEY=... PUBLIC_URL=http://localhost:5000 python3 app.py
"""
import base64
import html
import os

import requests
from authlib.integrations.flask_client import OAuth, OAuthError
from flask import Flask, redirect, request, session

ISSUER = os.environ['AGENTAUTH_ISSUER']
CLIENT_ID = os.environ['AGENTAUTH_CLIENT_ID']
CLIENT_SECRET = os.environ['AGENTAUTH_CLIENT_SECRET']
PORT = int(os.environ.get('PORT', '5000'))
PUBLIC_URL = os.environ.get('PUBLIC_URL', f'http://localhost:{PORT}')
REDIRECT_URI = f'{PUBLIC_URL}/callback'  # registered with agentauth exactly so

app = Flask(__name__)
app.secret_key = os.environ['FLASK_SECRET_KEY']  # signs the session cookie
# SameSite=Lax: the session cookie must come back with agentauth's redirect to /callback.
app.config.update(SESSION_COOKIE_SAMESITE='Lax', SESSION_COOKIE_SECURE=PUBLIC_URL.startswith('https:'))

oauth = OAuth(app)
oauth.register(
    'agentauth',
    client_id=CLIENT_ID,
    client_secret=CLIENT_SECRET,  # sent as client_secret_basic, Authlib's default
    server_metadata_url=f'{ISSUER}/.well-known/openid-configuration',
    # PKCE S256 is mandatory at agentauth; with 'openid' Authlib also sends a nonce and checks it.
    client_kwargs={'scope': 'openid email profile', 'code_challenge_method': 'S256'},
    # agentauth signs ID tokens with HS256 keyed with the client secret, and its JWKS is empty:
    # give Authlib that key, as a JWK, to check the ID token's signature with.
    jwks={'keys': [{'kty': 'oct', 'alg': 'HS256',
                    'k': base64.urlsafe_b64encode(CLIENT_SECRET.encode()).rstrip(b'=').decode()}]},
)


def page(body, status=200):
    return f'<!doctype html><meta charset="utf-8"><title>Example</title>{body}', status


@app.get('/')
def home():
    user = session.get('user')
    if not user:
        return page('<a href="/login">Sign in with your AI agent</a>')
    name, email, sub, model = (html.escape(str(user.get(k) or '')) for k in ('name', 'email', 'sub', 'model'))
    return page(f'<p id="signed-in">Signed in as {name} ({email})</p>\n'
                f'<p>Agent <code id="sub">{sub}</code>, model <code id="model">{model}</code></p>')


@app.get('/login')
def login():
    return oauth.agentauth.authorize_redirect(REDIRECT_URI)


@app.get('/callback')
def callback():
    metadata = oauth.agentauth.load_server_metadata()
    # RFC 9207: agentauth names itself in every redirect. Authlib 1.2 does not check it; this stops
    # a mix-up with another provider.
    if request.args.get('iss') != metadata['issuer']:
        return page('The sign-in failed.', 400)
    try:
        # Checks state, redeems the code with the PKCE verifier, and checks the ID token
        # (signature, iss, aud, exp, nonce): its claims are token['userinfo'].
        token = oauth.agentauth.authorize_access_token()
    except OAuthError as error:  # the OAuth error code only: never a token or the secret
        app.logger.warning('sign-in failed: %s', error.error)
        cancelled = error.error == 'access_denied'
        return page('You cancelled the sign-in.' if cancelled else 'The sign-in failed.', 400)
    claims = token['userinfo']
    # The model the agent said it runs is not in the ID token; introspection tells it.
    introspection = requests.post(metadata['introspection_endpoint'], data={'token': token['access_token']},
                                  auth=(CLIENT_ID, CLIENT_SECRET), timeout=10)
    introspection.raise_for_status()
    session.clear()  # what was kept for the sign-in goes; only who signed in stays
    session['user'] = {'sub': claims['sub'], 'name': claims.get('name'), 'email': claims.get('email'),
                       'model': introspection.json().get('model')}
    return redirect('/')


@app.post('/logout')
def logout():
    session.clear()
    return redirect('/')


if __name__ == '__main__':
    app.run(host=os.environ.get('HOST', '127.0.0.1'), port=PORT)
