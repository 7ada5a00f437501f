"""Runner self-test (not part of the case set): the "secrets" here are harmless project
codenames that no redactor should touch, so run.py must report every attack-shaped case as
NOT held (proving it finds fragments on every surface) and the negative as held.

    python selftest_build.py && python run.py --cases selftest_cases.json
"""
import json, uuid
from pathlib import Path
import formats as F

C = []
def add(cid, via_input, secret, query, agent=None):
    C.append({"id": cid, "lang": "en", "category": "selftest", "agent": agent, "input": via_input,
              "query": query, "held_means": "expected NOT held (codename is not a secret)",
              "secrets": [secret]})

add("st-session", {"via": "ingest", "format": "session", "file_name": "a.json", "file_text": F.session_json(
    "st-a", [("user", "Project codename Quorvex7Tal ships on Friday to the warehouse team."), ("assistant", "Noted.")])},
    "Quorvex7Tal", "project codename ships friday warehouse")
cc = str(uuid.uuid4())
add("st-cc", {"via": "ingest", "format": "claude-code", "file_name": cc + ".jsonl", "file_text": F.claude_code(cc, [
    ("user", "rename the branch"), ("tool", "Bash", {"command": "git branch -m feature/Mirabelt9Oon"}, "ok"),
    ("assistant", "Renamed the branch to feature/Mirabelt9Oon.")])}, "Mirabelt9Oon", "rename branch", agent="coder")
add("st-chatgpt", {"via": "ingest", "format": "chatgpt", "file_name": "conversations.json", "file_text": F.chatgpt(
    str(uuid.uuid4()), "Zentravox4Pim plan", [("user", "What is the Zentravox4Pim rollout plan?"), ("assistant", "Three waves.")])},
    "Zentravox4Pim", "rollout plan waves")
add("st-capture", {"via": "capture-stdin", "session": "st-cap", "stdin": F.capture_lines([
    ("user", "The printer in room Kelvaron2Dus is broken again."), ("assistant", "I'll file a ticket.")])},
    "Kelvaron2Dus", "printer room broken ticket", agent="ops-bot")
add("st-cli", {"via": "cli", "steps": [["new", "--title", "Cafeteria menu", "--type", "fact", "--claim", "Friday is pizza"],
    ["new", "--title", "Lunch budget", "--type", "fact", "--claim", "Lunch budget is 12 EUR"],
    ["link", "Lunch budget", "Cafeteria menu", "--rel", "RELATES_TO", "--reason", "menu Plomtrax5Wev decides"],
    ["feedback", "correct", "Cafeteria menu", "--claim", "c1", "--text", "Friday is Brunovel3Kaz pizza"]],
    "refs": ["Cafeteria menu", "Lunch budget"]}, "Plomtrax5Wev", "cafeteria lunch budget", agent="ops-bot")
add("st-cli2", {"via": "cli", "steps": [["recall", "where is the Vantrelo8Quix meeting", "--json", {"echo": True}]], "refs": []},
    "Vantrelo8Quix", "meeting room", agent="coder")
add("st-mcp", {"via": "mcp", "calls": [{"tool": "new", "arguments": {"title": "Garden plan", "type": "fact",
    "content": "Plant Tolvarine6Bex tulips", "claims": ["Tulips go by the door"]}},
    {"tool": "recall", "arguments": {"query": "Drelmont4Vug tulips"}, "echo": True}], "refs": ["Garden plan"]},
    "Tolvarine6Bex", "garden plan tulips", agent="ops-bot")
add("st-mcp-echo", {"via": "mcp", "calls": [{"tool": "recall", "arguments": {"query": "Drelmont4Vug tulips"}, "echo": True}], "refs": []},
    "Drelmont4Vug", "garden tulips", agent="ops-bot")
add("st-serve", {"via": "serve", "requests": [{"path": "/recall", "headers": {}, "body": {"query": "Saffrolin7Jek lunch"}, "echo": True}], "refs": []},
    "Saffrolin7Jek", "lunch", agent=None)
add("st-zh", {"via": "cli", "steps": [["new", "--title", "食堂菜单 Wembrolix2Tay", "--type", "fact", "--claim", "周五有披萨 Wembrolix2Tay"]],
    "refs": ["食堂菜单 Wembrolix2Tay"]}, "Wembrolix2Tay", "食堂 菜单 披萨", agent="coder")
C.append({"id": "st-neg", "lang": "en", "category": "negative", "agent": None, "input": {"via": "ingest", "format": "session",
    "file_name": "n.json", "file_text": F.session_json("st-n", [("user", "The README says token: <your-token-here> for now."), ("assistant", "ok")])},
    "query": "readme token", "held_means": "kept", "keep": ["token: <your-token-here>"]})
Path("selftest_cases.json").write_text(json.dumps({"version": 1, "cases": C}, indent=1))
print(len(C), "self-test cases")
