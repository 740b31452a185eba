"""Key-bound agents (docs/design.md §16): a private key instead of a secret.

The agent keeps an Ed25519 or P-256 private key (a JWK in a file only its user can read); its
owner registers the public half. Each authentication sends a fresh assertion, a JWT signed with
the key, good for one minute, one request and one issuer, so nothing reusable crosses the
network and an assertion made for a look-alike server is worthless at the real one.

Signing needs the ``cryptography`` package (``pip install 'agentauth[keys]'``, or Debian's
``python3-cryptography``), imported only when a key is used: agents with a secret keep the
standard library alone.

Example::

    from agentauth import AgentAuth
    from agentauth.keys import generate_key

    made = generate_key("agent-key.json")          # writes the private key, mode 0600
    print(made["public_key"], made["key_thumbprint"])  # for the owner to register
    auth = AgentAuth(key_file="agent-key.json")    # or AGENTAUTH_AGENT_KEY_FILE
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import secrets
import time
from typing import Any, Dict, Mapping, Optional, Union

from .errors import ConfigurationError

#: How long an assertion lives (seconds); the server accepts at most 60.
ASSERTION_LIFETIME = 60


def _cryptography() -> Any:
    try:
        from cryptography.hazmat.primitives import hashes, serialization  # noqa: F401
        from cryptography.hazmat.primitives.asymmetric import ec, ed25519, utils

        return ec, ed25519, utils, hashes
    except ImportError:
        raise ConfigurationError(
            description="Signing in with a key needs the cryptography package: pip install 'agentauth[keys]' "
            "(or your system's python3-cryptography)."
        ) from None


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def key_thumbprint(public_key: Mapping[str, str]) -> str:
    """The RFC 7638 SHA-256 thumbprint (base64url) of a public JWK, as the server and the
    console show it: the required members in lexicographic order (EC: crv, kty, x, y; OKP:
    crv, kty, x).

    Example::

        key_thumbprint({"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"})
        # 'kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k'
    """
    names = ("crv", "kty", "x", "y") if public_key.get("kty") == "EC" else ("crv", "kty", "x")
    members = json.dumps({name: public_key[name] for name in names}, separators=(",", ":"), sort_keys=True)
    return _b64(hashlib.sha256(members.encode("utf-8")).digest())


def public_key_of(private_key: Mapping[str, str]) -> Dict[str, str]:
    """The public half of a private JWK, as its owner registers it.

    Example::

        public_key_of(json.load(open("agent-key.json")))   # {'kty': 'OKP', 'crv': 'Ed25519', 'x': '…'}
    """
    names = ("kty", "crv", "x", "y") if private_key.get("kty") == "EC" else ("kty", "crv", "x")
    return {name: private_key[name] for name in names}


class AgentKey:
    """An agent's private key, ready to sign assertions. Never shown by ``repr``; not picklable.

    Example::

        key = AgentKey.from_jwk(open("agent-key.json").read())
        assertion = key.assertion("agt_…", "https://auth.example.com", "req_…")
    """

    __slots__ = ("_signer", "_alg", "public_key")

    def __init__(self, signer: Any, alg: str, public_key: Dict[str, str]) -> None:
        self._signer = signer
        self._alg = alg
        self.public_key = public_key

    @classmethod
    def from_jwk(cls, jwk: Union[str, Mapping[str, Any]]) -> "AgentKey":
        """The key in a private JWK (a mapping, or its JSON text as :func:`generate_key` writes it).

        Example::

            key = AgentKey.from_jwk({"kty": "OKP", "crv": "Ed25519", "x": "…", "d": "…"})
        """
        if isinstance(jwk, str):
            try:
                jwk = json.loads(jwk)
            except ValueError:
                raise ConfigurationError(description="The private key is not JSON: give the private JWK that keygen wrote.") from None
        if not isinstance(jwk, Mapping):
            raise ConfigurationError(description="The private key must be a JWK: a JSON object with kty, crv, x and d.")
        if not isinstance(jwk.get("d"), str) or not isinstance(jwk.get("x"), str):
            raise ConfigurationError(
                description='The key has no private part ("d"): give the agent its private key; its owner registers the public one.'
            )
        ec, ed25519, _utils, _hashes = _cryptography()
        try:
            if jwk.get("kty") == "OKP" and jwk.get("crv") == "Ed25519":
                signer = ed25519.Ed25519PrivateKey.from_private_bytes(_unb64(jwk["d"]))
                alg = "EdDSA"
            elif jwk.get("kty") == "EC" and jwk.get("crv") == "P-256" and isinstance(jwk.get("y"), str):
                signer = ec.derive_private_key(int.from_bytes(_unb64(jwk["d"]), "big"), ec.SECP256R1())
                alg = "ES256"
            else:
                raise ConfigurationError(description="Only Ed25519 (kty OKP) and P-256 (kty EC) keys can sign in.")
        except ConfigurationError:
            raise
        except ValueError:
            raise ConfigurationError(description="The private key cannot be used: its d is not a key of its curve.") from None
        public_key = public_key_of(jwk)  # type: ignore[arg-type]
        if _public_jwk(signer) != public_key:
            raise ConfigurationError(description="The private key's x (and y) are not its own public key.")
        return cls(signer, alg, public_key)

    @classmethod
    def from_file(cls, path: str) -> "AgentKey":
        """The key in ``path``; refused when other users can read the file (as ssh refuses one).

        Example::

            key = AgentKey.from_file("agent-key.json")
        """
        try:
            if os.name == "posix" and os.stat(path).st_mode & 0o077:
                raise ConfigurationError(
                    description=f"The key file {path} can be read by other users: make it yours alone (chmod 600 {path})."
                )
            with open(path, encoding="utf-8") as file:
                text = file.read()
        except OSError as error:
            raise ConfigurationError(description=f"The key file {path} cannot be read: {error.strerror}.") from None
        return cls.from_jwk(text)

    def assertion(self, agent_id: str, issuer: str, request_id: str, now: Optional[float] = None) -> str:
        """A fresh assertion for one authentication: ``iss`` = ``sub`` = the agent, ``aud`` = the
        issuer, the request's id, a unique ``jti``, and an expiry a minute after ``iat``.

        Example::

            body["agent_assertion"] = key.assertion("agt_…", "https://auth.example.com", "req_…")
        """
        _ec, _ed25519, utils, hashes = _cryptography()
        iat = int(time.time() if now is None else now)
        header = {"alg": self._alg, "typ": "JWT"}
        payload = {
            "iss": agent_id,
            "sub": agent_id,
            "aud": issuer,
            "request_id": request_id,
            "jti": _b64(secrets.token_bytes(16)),
            "iat": iat,
            "exp": iat + ASSERTION_LIFETIME,
        }
        signing_input = ".".join(_b64(json.dumps(part, separators=(",", ":")).encode("utf-8")) for part in (header, payload))
        if self._alg == "EdDSA":
            signature = self._signer.sign(signing_input.encode("ascii"))
        else:
            # JOSE's ES256 signature is r || s, 32 bytes each, not DER.
            r, s = utils.decode_dss_signature(self._signer.sign(signing_input.encode("ascii"), _ec.ECDSA(hashes.SHA256())))
            signature = r.to_bytes(32, "big") + s.to_bytes(32, "big")
        return f"{signing_input}.{_b64(signature)}"

    def __repr__(self) -> str:
        return f"AgentKey({self._alg}, thumbprint={key_thumbprint(self.public_key)!r})"

    __str__ = __repr__

    def __reduce__(self):  # type: ignore[no-untyped-def]
        raise TypeError("the agent's private key is not picklable")


def _public_jwk(signer: Any) -> Dict[str, str]:
    ec, ed25519, _utils, _hashes = _cryptography()
    from cryptography.hazmat.primitives import serialization

    public = signer.public_key()
    if isinstance(signer, ed25519.Ed25519PrivateKey):
        raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        return {"kty": "OKP", "crv": "Ed25519", "x": _b64(raw)}
    numbers = public.public_numbers()
    return {"kty": "EC", "crv": "P-256", "x": _b64(numbers.x.to_bytes(32, "big")), "y": _b64(numbers.y.to_bytes(32, "big"))}


def generate_key(path: str, alg: str = "Ed25519") -> Dict[str, Any]:
    """Makes a key pair: writes the private key (a JWK) to ``path``, created with mode 0600 and
    never over an existing file, and answers the public key and its thumbprint for the owner to
    register (``agentauth agent create --public-key``, the console or the API).

    Example::

        made = generate_key("agent-key.json", alg="ES256")
        made["public_key"]       # {'kty': 'EC', 'crv': 'P-256', 'x': '…', 'y': '…'}
        made["key_thumbprint"]   # 'kPrK_…'
    """
    if alg not in ("Ed25519", "ES256"):
        raise ConfigurationError(description="alg must be Ed25519 or ES256.")
    ec, ed25519, _utils, _hashes = _cryptography()
    if alg == "Ed25519":
        from cryptography.hazmat.primitives import serialization

        signer = ed25519.Ed25519PrivateKey.generate()
        d = signer.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption())
    else:
        signer = ec.generate_private_key(ec.SECP256R1())
        d = signer.private_numbers().private_value.to_bytes(32, "big")
    public_key = _public_jwk(signer)
    thumbprint = key_thumbprint(public_key)
    private_key = {**public_key, "d": _b64(d), "alg": "EdDSA" if alg == "Ed25519" else "ES256", "kid": thumbprint}
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise ConfigurationError(description=f"{path} exists; a key is never overwritten (choose another path).") from None
    with os.fdopen(fd, "w", encoding="utf-8") as file:
        file.write(json.dumps(private_key, indent=2) + "\n")
    return {"public_key": public_key, "key_thumbprint": thumbprint, "key_file": path}
