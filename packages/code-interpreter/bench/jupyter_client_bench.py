"""Baseline for bench/kernel.bench.mjs: Python's jupyter_client driving the same ipykernel.

Prints one JSON object with the same measurements the Node side takes. Run with the same
interpreter the Node client uses (e.g. /usr/bin/python3 on Debian).
"""
import json
import sys
import time

from jupyter_client.manager import KernelManager

ROUND_TRIPS = int(sys.argv[1]) if len(sys.argv) > 1 else 300
COLD_STARTS = int(sys.argv[2]) if len(sys.argv) > 2 else 5


def run(client, code, timeout=60):
    """Send execute_request; wait for both the shell reply and iopub idle. Returns outputs."""
    msg_id = client.execute(code, allow_stdin=False, stop_on_error=False)
    replied = idle = False
    outputs = []
    while not (replied and idle):
        if not idle:
            message = client.get_iopub_msg(timeout=timeout)
            if message["parent_header"].get("msg_id") != msg_id:
                continue
            kind = message["msg_type"]
            if kind == "status" and message["content"]["execution_state"] == "idle":
                idle = True
            elif kind in ("stream", "execute_result", "display_data", "error"):
                outputs.append(message)
        else:
            reply = client.get_shell_msg(timeout=timeout)
            if reply["parent_header"].get("msg_id") == msg_id:
                replied = True
        if idle and not replied:
            reply = client.get_shell_msg(timeout=timeout)
            if reply["parent_header"].get("msg_id") == msg_id:
                replied = True
    return outputs


def start():
    began = time.perf_counter()
    manager = KernelManager(kernel_name="python3")
    manager.kernel_cmd = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    manager.start_kernel()
    client = manager.client()
    client.start_channels()
    client.wait_for_ready(timeout=60)
    return manager, client, (time.perf_counter() - began) * 1000


def main():
    cold = []
    for _ in range(COLD_STARTS):
        manager, client, elapsed = start()
        cold.append(elapsed)
        client.stop_channels()
        manager.shutdown_kernel(now=True)

    manager, client, _ = start()
    for _ in range(20):
        run(client, "1+1")
    trips = []
    for _ in range(ROUND_TRIPS):
        began = time.perf_counter()
        run(client, "1+1")
        trips.append((time.perf_counter() - began) * 1000)

    run(client, "import matplotlib.pyplot as plt")
    plots = []
    for _ in range(10):
        began = time.perf_counter()
        outputs = run(client, "plt.plot([1, 3, 2]); plt.show()")
        plots.append((time.perf_counter() - began) * 1000)
        assert any("image/png" in o["content"].get("data", {}) for o in outputs), outputs

    interrupts = []
    for _ in range(5):
        msg_id = client.execute("while True:\n    pass", allow_stdin=False, stop_on_error=False)
        time.sleep(0.1)
        began = time.perf_counter()
        manager.interrupt_kernel()
        # Drain the interrupted request, then time a 1+1 until it completes.
        while True:
            reply = client.get_shell_msg(timeout=30)
            if reply["parent_header"].get("msg_id") == msg_id:
                break
        run(client, "1+1")
        interrupts.append((time.perf_counter() - began) * 1000)

    client.stop_channels()
    manager.shutdown_kernel(now=True)
    # Raw samples: the Node side pools rounds and computes the statistics for both clients.
    print(json.dumps({
        "coldStartMs": cold,
        "roundTripMs": trips,
        "plotRoundTripMs": plots,
        "interruptToUsableMs": interrupts,
        "jupyterClient": __import__("jupyter_client").__version__,
    }))


if __name__ == "__main__":
    main()
