"""Runs one SDK operation for test/agent-sdk-python.test.ts and prints the outcome as JSON.

Reads a JSON object from stdin: {"op": ..., "config": {AgentAuth kwargs}, "args": {...}}.
The AgentAuth settings not in "config" come from the AGENTAUTH_* environment variables.
Prints one JSON line to stdout:
  {"ok": true, "result": ..., "logs": [...], "elapsed": seconds}
  {"ok": false, "error": {"type", "mro", "code", "status", "description", "retry_after",
   "str", "repr", "traceback", "is_timeout_error", "is_value_error", "request", "frame_locals"},
   "logs", "elapsed"}
Exit status: 0 on success, 2 when the SDK raised an AgentAuthError, 1 on anything else.
Every log record of the "agentauth" logger is also written to stderr as it happens, so the
test can wait for "push stream open" or "polling" before it moves the browser on.
"""

import dataclasses
import json
import logging
import sys
import time
import traceback

import agentauth
from agentauth import AgentAuth, AgentAuthError

logs = []


class _Collect(logging.Handler):
    def emit(self, record):
        text = record.getMessage()
        logs.append(text)
        sys.stderr.write(text + "\n")
        sys.stderr.flush()


logger = logging.getLogger("agentauth")
logger.setLevel(logging.DEBUG)
logger.addHandler(_Collect())


def plain(value):
    if dataclasses.is_dataclass(value):
        return dataclasses.asdict(value)
    return value


def frame_locals(error):
    """repr() of the local variables of every frame the error's traceback (and the chain of
    exceptions behind it) keeps: what error reporters such as Sentry record."""
    texts, seen = [], set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        tb = error.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code.co_filename != __file__:
                texts.append(f"{tb.tb_frame.f_code.co_name}: {tb.tb_frame.f_locals!r}")
            tb = tb.tb_next
        error = error.__cause__ or error.__context__
    return texts


def run(spec):
    op = spec["op"]
    args = spec.get("args", {})
    if op == "request_id_from":
        return agentauth.request_id_from(args["text"])
    if op == "issuer_from_page_url":
        return agentauth.issuer_from_page_url(args["url"])
    if op == "generate_key":
        return agentauth.generate_key(**args)
    auth = AgentAuth(**spec.get("config", {}))
    if op == "construct":
        return {"issuer": auth.issuer, "agent_id": auth.agent_id, "model": auth.model, "timeout": auth.timeout}
    if op == "repr":
        return {"repr": repr(auth), "str": str(auth), "vars": repr(vars(auth)), "dir": repr(dir(auth))}
    if op == "inspect":
        return plain(auth.inspect(args["request_id"]))
    if op == "check_status":
        return plain(auth.check_status(args["request_id"]))
    if op == "sign_in":
        return plain(auth.sign_in(**args))
    if op == "sign_in_owner":
        # sign_in with on_approval_pending: what the callback was told comes back with the result.
        told = []
        result = auth.sign_in(on_approval_pending=lambda pending: told.append(plain(pending)), **args)
        return {"sign_in": plain(result), "told": told}
    if op == "list_actions":
        return [plain(action) for action in auth.list_actions()]
    if op == "wait_for_action":
        # What on_waiting was told comes back with the decided action.
        told = []

        def on_waiting(action):
            told.append(action.message)
            sys.stderr.write("waiting for the owner\n")
            sys.stderr.flush()

        decided = auth.wait_for_action(on_waiting=on_waiting, **args)
        return {"action": plain(decided), "told": told}
    if op == "authenticate":
        return auth._authenticate(**args)
    if op == "wait":
        return auth.wait_for_completion(**args)
    if op == "sign_in_and_wait":
        result = auth.sign_in(**args["sign_in"])
        return {"sign_in": plain(result), "wait": auth.wait_for_completion(result.request_id, **args.get("wait", {}))}
    if op == "poll_schedule":
        # The polling schedule on a virtual clock: every pause the SDK takes, without waiting.
        import agentauth.client as client_module

        class VirtualTime:
            def __init__(self):
                self.now = time.monotonic()
                self.sleeps = []

            def monotonic(self):
                return self.now

            def sleep(self, seconds):
                self.sleeps.append(round(seconds, 3))
                self.now += seconds

        virtual = VirtualTime()
        client_module.time = virtual
        try:
            auth.wait_for_completion(args["request_id"], timeout=args["timeout"], push=False)
        except agentauth.WaitTimeoutError as error:
            return {"sleeps": virtual.sleeps, "error": type(error).__name__}
        finally:
            client_module.time = time
        return {"sleeps": virtual.sleeps, "error": None}
    raise SystemExit(f"unknown op {op!r}")


def main():
    spec = json.loads(sys.stdin.read())
    started = time.monotonic()
    try:
        result = run(spec)
    except AgentAuthError as error:
        print(
            json.dumps(
                {
                    "ok": False,
                    "error": {
                        "type": type(error).__name__,
                        "mro": [cls.__name__ for cls in type(error).__mro__],
                        "code": error.code,
                        "status": error.status,
                        "description": error.description,
                        "retry_after": error.retry_after,
                        "str": str(error),
                        "repr": repr(error),
                        "traceback": "".join(traceback.format_exception(type(error), error, error.__traceback__)),
                        "is_timeout_error": isinstance(error, TimeoutError),
                        "is_value_error": isinstance(error, ValueError),
                        "request": plain(error.request),
                        "frame_locals": frame_locals(error),
                    },
                    "logs": logs,
                    "elapsed": time.monotonic() - started,
                }
            )
        )
        return 2
    print(json.dumps({"ok": True, "result": result, "logs": logs, "elapsed": time.monotonic() - started}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
