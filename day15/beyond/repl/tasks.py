"""Beyond the tutorial: /tasks, the folder's tasks whose outcome was not delivered (an agent killed
during a task, a task past its taskTimeout, one cancelled with Ctrl-C), as their servers say they are now.

/tasks lists them (server, tool, id, status, age); /tasks <id> shows a completed one's result here
(printed, not sent to the model). A completed task is forgotten once its result was shown, a failed or
cancelled one once it was listed, one its server no longer knows at once (with a line).
"""
import time

from beyond.client.content import call_text
from beyond.client.errors import ReplyError
from beyond.client.tasks import described
from beyond.folder.tasks import identity
from beyond.repl.resources import clients
from beyond.terminal import shown
from mcp import McpError

# What a server answers for a task id it does not know (the extension: -32602, invalid params).
UNKNOWN_TASK = -32602


def age(seconds: float) -> str:
    """12 s, 3 min, 5 h, 2 d."""
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{int(seconds // size)} {unit}"
    return f"{max(0, int(seconds))} s"


def cmd_tasks(session, arg: str) -> None:
    """[task id]: this folder's tasks not shown yet (after a crash, Ctrl-C or taskTimeout); with an id, its result;
    forget <id>: drop one"""
    log, wanted = session.agent.task_log, arg.strip()
    kept = log.pending()
    forget = wanted.startswith("forget ")
    wanted = wanted.removeprefix("forget ").strip() if forget else wanted
    if wanted and wanted not in (entry["id"] for entry in kept.values()):
        print(f"no task {shown(wanted, one_line=True)} waits here; /tasks lists them")
        return
    if forget:
        for key in [key for key, entry in kept.items() if entry["id"] == wanted]:
            log.forget(key)
        print(f"forgot task {shown(wanted, one_line=True)}")
        return
    if not kept:
        print("(no tasks of this folder wait to be shown)")
        return
    running = clients(session)
    for key, entry in kept.items():
        task_id = entry["id"]
        if wanted and task_id != wanted:
            continue
        line = f"  {entry['server']}  {entry['tool']}  {task_id}"
        client = running.get(entry["server"])
        if client is None:
            print(shown(f"{line}  (its server is not up)", one_line=True))
            continue
        if identity(client.cfg) != entry["identity"]:  # another program under the name: never asked of it
            print(shown(f"{line}  server changed: not resumed (/tasks forget {task_id} drops it)", one_line=True))
            continue
        try:
            task = client.task_status(task_id)
        except McpError as e:
            if isinstance(e, ReplyError) and e.code == UNKNOWN_TASK:
                log.forget(key)
                print(shown(f"{line}  dropped: the server no longer knows it ({e})", one_line=True))
            else:
                print(shown(f"{line}  error: {e}", one_line=True))
            continue
        status = task.get("status")
        print(shown(f"{line}  {described(task)[5:]}  {age(time.time() - entry['created'])}", one_line=True))
        if status in ("failed", "cancelled"):
            log.forget(key)
        elif status == "completed" and wanted:
            result = task.get("result") if isinstance(task.get("result"), dict) else {}
            try:
                print(shown(call_text(result, None, entry["server"])))
            except McpError as e:
                print(shown(f"error: {e}"))
            log.forget(key)
        elif status == "completed":
            print(f"  (/tasks {shown(task_id, one_line=True)} shows its result)")
