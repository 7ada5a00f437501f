"""Writes cases.json for namespace-blind1: python make_cases.py cases.json (the JSON is the case set)."""
import json, sys

C = []


def case(id, category, door, input, held_if, lang="en", check=None, phase="main", echo=None,
         markers="core", unchanged=False, **kw):
    rec = {"id": id, "lang": lang, "category": category, "door": door, "phase": phase,
           "input": input, "check": check or {"type": "no_leak"}, "held_if": held_if}
    if echo:
        rec["echo"] = echo
    if markers != "core":
        rec["markers"] = markers
    if unchanged:
        rec["unchanged"] = True
    rec.update(kw)
    C.append(rec)


def cli(*args, agent="bob", **kw):
    d = {"cli": list(args), "agent": agent}
    d.update(kw)
    return d


NOLEAK = "no alice marker or alice note id in stdout/stderr (bob's own typed input removed first), and no crash"
MISSING = ("bob gets exactly what he gets for a ref that does not exist: same exit code and the same "
           "output once each ref is replaced by <REF> (ids, hashes, times normalised); no alice marker; no crash")
MISSING_W = MISSING + "; every alice file byte-identical afterwards"


def missing(probe_refs, control_refs, control, write=False):
    return {"type": "same_as_missing", "probe_refs": probe_refs, "control_refs": control_refs,
            "control": control}


# ---------------------------------------------------------------- phase count (twin V / V0)
case("twin-eval-telemetry", "oracle", "alaya eval --from-telemetry --json", cli("eval", "--from-telemetry", "--json"),
     "no alice query text in top_missed_queries, and the recall/empty-recall counts equal those of the twin vault where alice never existed (her recalls are her material)",
     phase="count", check={"type": "twin", "extract": "eval_tel"})
case("twin-status", "oracle", "alaya status --json", cli("status", "--json"),
     "every count bob sees (sessions, turns, nodes, kinds, card types, links, claims, units, tier and temperature totals) and the exit code equal the twin vault's",
     phase="count", check={"type": "twin", "extract": "status"})
case("twin-schema-relations", "oracle", "alaya schema --relations --json", cli("schema", "--relations", "--json"),
     "relation type names and their use counts (CO_OCCURS aside, see twin-cooccurs) equal the twin's: no ORCHID_BLOCKS, no edge into alice's notes counted",
     phase="count", check={"type": "twin", "extract": "schema_rel"})
case("twin-cooccurs", "oracle", "CO_OCCURS edges derived from recall telemetry (schema --relations)",
     cli("schema", "--relations", "--json"),
     "the number of CO_OCCURS edges bob's schema counts equals the twin's: no derived edge exists only because of alice's recalls",
     phase="count", check={"type": "twin", "extract": "schema_cooccurs"})
case("twin-schema-node-types", "oracle", "alaya schema --node-types --json", cli("schema", "--node-types", "--json"),
     "kinds, card types (no kestrelplan), entity types and totals equal the twin's",
     phase="count", check={"type": "twin", "extract": "json_whole"})
case("twin-doctor", "oracle", "alaya doctor --json", cli("doctor", "--json"),
     "every check's verdict and message (e.g. 'N notes parse cleanly') and item count equal the twin's",
     phase="count", check={"type": "twin", "extract": "doctor"})
case("twin-compile-full", "oracle", "alaya compile --full --json", cli("compile", "--full", "--json"),
     "note, unit, edge and claim counts a compile started by bob prints equal the twin's",
     phase="count", check={"type": "twin", "extract": "compile"})
case("twin-lint-summary", "oracle", "alaya lint --format json (summary)", cli("lint", "--format", "json"),
     "lint's summary (errors, warnings, files, by_code) equals the twin's: no finding that only alice's notes (or a shared note's link into them) cause",
     phase="count", check={"type": "twin", "extract": "lint_summary"})
case("twin-recall-explorable-S1", "oracle", "alaya recall (explorable relation counts)",
     cli("recall", "payment webhook retry budget", "--json"),
     "the titles returned and the `explorable` relation types with their node counts equal the twin's (an edge from alice's runbook into this card is not counted)",
     phase="count", check={"type": "twin", "extract": "recall"})
case("twin-recall-explorable-S2", "oracle", "alaya recall --concepts (explorable counts)",
     cli("recall", "--concepts", "warehouse cutover checklist", "--json"),
     "titles and explorable counts equal the twin's", phase="count", check={"type": "twin", "extract": "recall"})
case("twin-traverse-S2", "oracle", "alaya traverse S2 --depth 2 --json", cli("traverse", "{S2.id}", "--depth", "2", "--json"),
     "the neighbourhood of the shared checklist has the same titles and as many nodes as in the twin",
     phase="count", check={"type": "twin", "extract": "titles"})
case("twin-context", "oracle", "alaya context --json", cli("context", "--json"),
     "the persona/MEMORY sections have as many lines as in the twin and nothing is counted as omitted that the twin lacks",
     phase="count", check={"type": "twin", "extract": "context"})
case("twin-feedback-correct-shared", "cli-write", "alaya feedback correct <shared card> (dependants marked stale)",
     cli("feedback", "correct", "{S2.id}", "--claim", "c1", "--text", "Every warehouse cutover needs a rehearsed rollback plan.", "--json"),
     "the answer (normalised, e.g. how many dependants were marked stale) equals the twin's, and alice's runbook, which depends on the card, is byte-identical",
     phase="count", check={"type": "twin", "extract": "json_whole"}, unchanged=True)

# ---------------------------------------------------------------- phase stale (after an owner's hand edit of alice's notes)
case("stale-recall-flag", "oracle", "recall `stale` / `changed_notes` after a hand edit of alice's notes",
     cli("recall", "payment webhook retry budget", "--json"),
     "after the owner edits two of alice's notes on disk, bob's recall says `stale` exactly as before the edit and `changed_notes` names none of alice's files",
     phase="stale", check={"type": "stale", "what": "recall"})
case("stale-recall-zh", "oracle", "recall (zh) `stale` after a hand edit of alice's notes",
     cli("recall", "机房巡检", "--json"),
     "same as stale-recall-flag for a Chinese query", lang="zh", phase="stale", check={"type": "stale", "what": "recall"})
case("stale-status-flag", "oracle", "alaya status: stale yes/no after a hand edit of alice's notes",
     cli("status", "--json"),
     "status's exit code and `stale` are what they were before the edit (only alice's files changed)",
     phase="stale", check={"type": "stale", "what": "status"})
case("stale-compile-check", "oracle", "alaya compile --check after a hand edit of alice's notes",
     cli("compile", "--check", "--json"),
     "exit code and output (normalised) are the same as before the edit", phase="stale",
     check={"type": "stale", "what": "compile_check"})
case("stale-recall-fresh", "cli-recall", "alaya recall --fresh (compiles first) after the hand edit",
     cli("recall", "budget notes cap this quarter", "--fresh", "--json"),
     NOLEAK + "; `changed_notes` names none of alice's files", phase="stale",
     check={"type": "stale", "what": "fresh"})

# ---------------------------------------------------------------- phase introspect
case("introspect-dry-run", "cli-inventory", "alaya introspect --dry-run --json", cli("introspect", "--dry-run", "--json"),
     NOLEAK + " (duplicate pairs, conflicts, gaps, entity pages, promotions, forget candidates all from bob's view)",
     phase="introspect")
case("introspect-full-as-bob", "cli-write", "alaya introspect --json run by bob (clock +2 days)",
     cli("introspect", "--json", env={"ALAYA_NOW": "{NOW_PLUS_2D}"}),
     NOLEAK + "; every alice file byte-identical afterwards (no merge, archive of her ephemeral note, stale mark or entity rewrite done as bob)",
     phase="introspect", unchanged=True)
case("introspect-if-due", "cli-inventory", "alaya introspect --if-due --json", cli("introspect", "--if-due", "--json"),
     NOLEAK, phase="introspect")

# ---------------------------------------------------------------- phase main: show by every kind of ref
ctl_show = lambda ref: cli("show", ref, "--json")
case("show-alice-id", "cli-show", "alaya show <alice card id> --json", cli("show", "{A1.id}", "--json"), MISSING,
     check=missing(["{A1.id}"], ["card-0badc0de"], ctl_show("card-0badc0de")))
case("show-alice-id-upper", "cli-show", "alaya show <ALICE ID IN CAPITALS>", cli("show", "{A1.id_upper}"), MISSING,
     check=missing(["{A1.id_upper}"], ["CARD-0BADC0DE"], cli("show", "CARD-0BADC0DE")))
case("show-alice-title", "cli-show", "alaya show <alice title> --json", cli("show", "{A1.title}", "--json"), MISSING,
     check=missing(["{A1.title}"], ["Kestrel warehouse cutover notebook"], ctl_show("Kestrel warehouse cutover notebook")))
case("show-alice-alias", "cli-show", "alaya show <alice alias>", cli("show", "Operation Wolfsbane"), MISSING,
     check=missing(["Operation Wolfsbane"], ["Operation Nightshade"], cli("show", "Operation Nightshade")))
case("show-alice-path", "cli-show", "alaya show <vault path of alice's note> --json", cli("show", "{A1.path}", "--json"), MISSING,
     check=missing(["{A1.path}"], ["cards/kestrelplan/Unknown cutover runbook.md"], ctl_show("cards/kestrelplan/Unknown cutover runbook.md")))
case("show-alice-path-prefix", "cli-show", "alaya show path:<alice path>", cli("show", "path:{A1.path}", "--json"), MISSING,
     check=missing(["path:{A1.path}"], ["path:cards/kestrelplan/Unknown cutover runbook.md"], ctl_show("path:cards/kestrelplan/Unknown cutover runbook.md")))
case("show-alice-abs-path", "cli-show", "alaya show <absolute path of alice's note>", cli("show", "{V}/{A1.path}", "--json"), MISSING,
     check=missing(["{V}/{A1.path}"], ["{V}/cards/kestrelplan/Unknown cutover runbook.md"], ctl_show("{V}/cards/kestrelplan/Unknown cutover runbook.md")))
case("show-alice-dotted-path", "cli-show", "alaya show ./cards/x/../x/<alice file>", cli("show", "./cards/kestrelplan/../kestrelplan/{A1.file}", "--json"), MISSING,
     check=missing(["./cards/kestrelplan/../kestrelplan/{A1.file}"], ["./cards/kestrelplan/../kestrelplan/Unknown cutover runbook.md"], ctl_show("./cards/kestrelplan/../kestrelplan/Unknown cutover runbook.md")))
case("show-alice-filename", "cli-show", "alaya show <alice file name with .md>", cli("show", "{A1.file}"), MISSING,
     check=missing(["{A1.file}"], ["Unknown cutover runbook.md"], cli("show", "Unknown cutover runbook.md")))
case("show-alice-wikilink", "cli-show", "alaya show \"[[alice title]]\" (pasted wikilink)", cli("show", "[[{A1.title}]]", "--json"), MISSING,
     check=missing(["[[{A1.title}]]"], ["[[Kestrel warehouse cutover notebook]]"], ctl_show("[[Kestrel warehouse cutover notebook]]")))
case("show-alice-heading-ref", "cli-show", "alaya show \"alice title#heading\"", cli("show", "{A1.title}#Budget", "--json"), MISSING,
     check=missing(["{A1.title}#Budget"], ["Kestrel warehouse cutover notebook#Budget"], ctl_show("Kestrel warehouse cutover notebook#Budget")))
case("show-alice-raw", "cli-show", "alaya show --raw <alice id>", cli("show", "{A1.id}", "--raw"), MISSING,
     check=missing(["{A1.id}"], ["card-0badc0de"], cli("show", "card-0badc0de", "--raw")))
case("show-alice-id-prefix", "cli-show", "alaya show <first 9 characters of alice's id>", cli("show", "{A1.id_prefix}", "--json"), MISSING,
     check=missing(["{A1.id_prefix}"], ["card-0bad"], ctl_show("card-0bad")))
case("show-alice-typo-title", "cli-show", "alaya show <alice title with a typo> (did-you-mean?)", cli("show", "Kestrel Orchid warehouse cutover runbok", "--json"), MISSING,
     check=missing(["Kestrel Orchid warehouse cutover runbok"], ["Kestrel Orchid warehouse cutover notbok"], ctl_show("Kestrel Orchid warehouse cutover notbok")))
case("show-alice-zh-title", "cli-show", "alaya show <alice Chinese title>", cli("show", "{A2.title}", "--json"), MISSING, lang="zh",
     check=missing(["{A2.title}"], ["白鹭计划的数据库迁移"], ctl_show("白鹭计划的数据库迁移")))
case("show-alice-zh-alias", "cli-show", "alaya show <alice Chinese alias>", cli("show", "青鸾迁移"), MISSING, lang="zh",
     check=missing(["青鸾迁移"], ["白鹭迁移"], cli("show", "白鹭迁移")))
case("show-alice-session", "cli-show", "alaya show <alice session id> --json", cli("show", "sess-nightjar-0412", "--json"), MISSING,
     check=missing(["sess-nightjar-0412"], ["sess-nightjar-0499"], ctl_show("sess-nightjar-0499")))
case("show-alice-session-turn", "cli-show", "alaya show <alice session>#^t3 (block ref)", cli("show", "sess-nightjar-0412#^t3"), MISSING,
     check=missing(["sess-nightjar-0412#^t3"], ["sess-nightjar-0499#^t3"], cli("show", "sess-nightjar-0499#^t3")))
case("show-alice-entity", "cli-show", "alaya show <alice's person entity>", cli("show", "Ysolde Varga", "--json"), MISSING,
     check=missing(["Ysolde Varga"], ["Yvonne Vargas"], ctl_show("Yvonne Vargas")))
case("show-alice-main", "cli-show", "alaya show <alice-main note id>", cli("show", "{A8.id}", "--json"), MISSING,
     check=missing(["{A8.id}"], ["card-0badc0de"], ctl_show("card-0badc0de")))
case("show-alice-ephemeral", "cli-show", "alaya show <alice-ephemeral note title>", cli("show", "Quillfeather scratch draft"), MISSING,
     check=missing(["Quillfeather scratch draft"], ["Inkwell scratch draft"], cli("show", "Inkwell scratch draft")))
case("show-alice-archived", "cli-show", "alaya show <alice's deprecated (archived) card id>", cli("show", "{A10.id}", "--json"), MISSING,
     check=missing(["{A10.id}"], ["card-0badc0de"], ctl_show("card-0badc0de")))
case("show-alice-planted-filename", "cli-show", "alaya show <file name of a hand-written alice note>", cli("show", "halcyon-ledger", "--raw"), MISSING,
     check=missing(["halcyon-ledger"], ["mariner-ledger"], cli("show", "mariner-ledger", "--raw")))
case("show-alice-plain-note", "cli-show", "alaya show <alice's plain note outside cards/>", cli("show", "Tamarind-Vale offsite ideas"), MISSING,
     check=missing(["Tamarind-Vale offsite ideas"], ["Juniper-Vale offsite ideas"], cli("show", "Juniper-Vale offsite ideas")))
case("show-alice-saved-query", "cli-show", "alaya show <path of alice's saved recall in queries/>", cli("show", "{AQ.path}", "--json"), MISSING,
     check=missing(["{AQ.path}"], ["queries/2026-01-01 recall nothing here.md"], ctl_show("queries/2026-01-01 recall nothing here.md")))
case("show-alice-proposal", "cli-show", "alaya show <id of alice's pending proposal>", cli("show", "{A11.id}", "--json"), MISSING,
     check=missing(["{A11.id}"], ["card-0badc0de"], ctl_show("card-0badc0de")))
case("ambiguous-alias-release-train", "oracle", "alaya show <alias a shared and an alice card share>", cli("show", "release train", "--json"),
     "the alias resolves to the shared 'Nightly release train' (exit 0, its id) — not 'ambiguous', no candidate list naming alice's card",
     check={"type": "resolves_to", "id": "{S4.id}"})
case("ambiguous-title-access-review", "oracle", "alaya show <title a shared and an alice card share, other folders>", cli("show", "Quarterly access review", "--json"),
     "resolves to the shared decision card (exit 0, its id), not ambiguous", check={"type": "resolves_to", "id": "{S7.id}"})
case("ambiguous-title-invoice-retry", "oracle", "alaya show <title alice reused, file renamed with an id>", cli("show", "Retry budget for the invoice exporter", "--json"),
     "resolves to the shared card (exit 0, its id, not archived), not ambiguous", check={"type": "resolves_to", "id": "{S6.id}"})
case("show-shared-cites-alice", "cli-show", "alaya show <shared card whose evidence cites alice's session turn>", cli("show", "{S8.id}", "--json"),
     NOLEAK + " (the session id the owner typed may show; the turn's words may not)")

# ---------------------------------------------------------------- recall
case("recall-hybrid", "cli-recall", "alaya recall <free text> --json", cli("recall", "what is the rollback window for the warehouse cutover and who signed it off", "--json", "--top-k", "20"), NOLEAK)
case("recall-bm25", "cli-recall", "alaya recall --mode bm25", cli("recall", "budget code for the warehouse cutover runbook", "--mode", "bm25", "--json", "--top-k", "20"), NOLEAK)
case("recall-vector", "cli-recall", "alaya recall --mode vector", cli("recall", "which vendor approves the rollback of the depot migration", "--mode", "vector", "--json", "--top-k", "20"), NOLEAK)
case("recall-zh", "cli-recall", "alaya recall <Chinese free text>", cli("recall", "数据库迁移的密钥轮换在哪个机房", "--json", "--top-k", "20"), NOLEAK, lang="zh")
case("recall-zh-bm25", "cli-recall", "alaya recall --mode bm25 <Chinese>", cli("recall", "仓库 迁移 推迟 下个月", "--mode", "bm25", "--json"), NOLEAK, lang="zh")
case("recall-concepts-rel", "cli-recall", "alaya recall --concepts … --rel DEPENDS_ON --depth 2", cli("recall", "--concepts", "warehouse cutover,rollback plan", "--rel", "DEPENDS_ON", "--depth", "2", "--json"), NOLEAK)
case("recall-from-shared-node", "cli-recall", "alaya recall --from-nodes <shared checklist> --depth 3", cli("recall", "--from-nodes", "{S2.id}", "--depth", "3", "--json"), NOLEAK + " (graph expansion from the shared card never reaches alice's runbook)")
case("recall-from-alice-node", "cli-recall", "alaya recall --from-nodes <alice id>", cli("recall", "--from-nodes", "{A1.id}", "--depth", "2", "--json"),
     MISSING + " (the control seeds from a made-up id)", check=missing(["{A1.id}"], ["card-0badc0de"], cli("recall", "--from-nodes", "card-0badc0de", "--depth", "2", "--json")))
case("recall-namespace-alice", "cli-recall", "alaya recall --namespace alice", cli("recall", "rollback window", "--namespace", "alice", "--json"),
     "refused or empty exactly as for --namespace carol (an agent that never wrote anything): same exit code, same normalised output",
     check=missing(["alice"], ["carol"], cli("recall", "rollback window", "--namespace", "carol", "--json")))
case("recall-namespace-alice-main", "cli-recall", "alaya recall --namespace alice-main", cli("recall", "budget cap", "--namespace", "alice-main", "--json"),
     "same as for --namespace carol-main", check=missing(["alice-main"], ["carol-main"], cli("recall", "budget cap", "--namespace", "carol-main", "--json")))
case("recall-all-namespaces", "cli-recall", "alaya recall --all-namespaces", cli("recall", "rollback window budget code vendor shortlist scratch draft", "--all-namespaces", "--json", "--top-k", "50"), NOLEAK)
case("recall-kind-session", "cli-recall", "alaya recall --kind session", cli("recall", "depot has no backup generator, rental unit needed", "--kind", "session", "--json"), NOLEAK)
case("recall-kind-entity", "cli-recall", "alaya recall --kind entity", cli("recall", "who approved the spare parts budget", "--kind", "entity", "--json"), NOLEAK)
case("recall-kind-entity-shared-person", "cli-recall", "alaya recall --kind entity <shared person alice's sessions also name>", cli("recall", "Marek Novak depot generator vendor call", "--kind", "entity", "--json"), NOLEAK + " (the shared Marek Novak page carries no fact from alice's sessions)")
case("recall-kind-query", "cli-recall", "alaya recall --kind query", cli("recall", "depot rollback plan", "--kind", "query", "--json"), NOLEAK)
case("recall-kind-note", "cli-recall", "alaya recall --kind note", cli("recall", "offsite lodge for 14 people", "--kind", "note", "--json"), NOLEAK)
case("recall-tag", "cli-recall", "alaya recall --tag <alice's tag>", cli("recall", "runbook", "--tag", "ledgerfox", "--json"), NOLEAK, echo=["ledgerfox"])
case("recall-type", "cli-recall", "alaya recall --type <alice's custom card type>", cli("recall", "runbook", "--type", "kestrelplan", "--json"), NOLEAK, echo=["kestrelplan"])
case("recall-zh-tag", "cli-recall", "alaya recall --tag <alice's Chinese tag>", cli("recall", "迁移", "--tag", "青鸾", "--json"), NOLEAK, lang="zh", echo=["青鸾"])
case("recall-as-of", "cli-recall", "alaya recall --as-of", cli("recall", "rollback window sign off", "--as-of", "2030-01-01", "--json"), NOLEAK)
case("recall-pending", "cli-recall", "alaya recall --pending (review branch)", cli("recall", "quarterly deploy freeze", "--pending", "--json"), NOLEAK + " (alice's card waiting for review is not served)")
case("recall-format-prompt", "cli-recall", "alaya recall --format prompt", cli("recall", "warehouse cutover rollback window", "--format", "prompt"), NOLEAK)
case("recall-format-text", "cli-recall", "alaya recall (human text)", cli("recall", "the preferred tea during long cutovers", "--format", "text"), NOLEAK)
case("recall-stdin-namespace", "cli-recall", "echo '{\"namespace\": \"alice\"}' | alaya recall --json", cli("recall", "--json", stdin_json={"query": "rollback window", "namespace": "alice"}),
     "same as the same JSON naming carol", check=missing(["alice"], ["carol"], cli("recall", "--json", stdin_json={"query": "rollback window", "namespace": "carol"})))
case("recall-stdin-all", "cli-recall", "JSON on stdin: all_namespaces + from_nodes + depth", cli("recall", "-", "--json", stdin_json={"query": "budget code", "all_namespaces": True, "from_nodes": ["{S2.id}", "{S1.id}"], "depth": 3}), NOLEAK)
case("recall-save", "cli-recall", "alaya recall --save (bob's saved query note)", cli("recall", "warehouse cutover rollback", "--save", "--json", read_saved=True), NOLEAK + " — also in the queries/ note bob's --save wrote")
case("recall-ephemeral", "cli-recall", "alaya recall <words of alice's ephemeral scratch note>", cli("recall", "half-written plan for the cutover weekend", "--json"), NOLEAK)
case("recall-persona-bait", "cli-recall", "alaya recall <alice's stated preferences>", cli("recall", "what tea and keyboard does the user prefer", "--all-namespaces", "--json"), NOLEAK)

# ---------------------------------------------------------------- navigate
case("traverse-path-through-alice", "cli-navigate", "alaya traverse <S1> <S2> (only path runs through alice's card)", cli("traverse", "{S1.id}", "{S2.id}", "--max-hops", "4", "--json"), NOLEAK + " (no path through alice's runbook, no hop count that needs it)")
case("traverse-neighbourhood-zh", "cli-navigate", "alaya traverse <shared zh card> --depth 2", cli("traverse", "{S5.id}", "--depth", "2", "--json"), NOLEAK, lang="zh")
case("traverse-shared-with-private-target", "cli-navigate", "alaya traverse <shared card alice linked to her card> --depth 1", cli("traverse", "{S4.id}", "--depth", "1", "--json"), NOLEAK)
case("traverse-alice-id", "cli-navigate", "alaya traverse <alice id>", cli("traverse", "{A1.id}", "--json"), MISSING,
     check=missing(["{A1.id}"], ["card-0badc0de"], cli("traverse", "card-0badc0de", "--json")))
case("traverse-alice-as-b", "cli-navigate", "alaya traverse <shared> <alice title>", cli("traverse", "{S2.id}", "{A1.title}", "--json"), MISSING,
     check=missing(["{A1.title}"], ["Kestrel warehouse cutover notebook"], cli("traverse", "{S2.id}", "Kestrel warehouse cutover notebook", "--json")))
case("traverse-save", "cli-navigate", "alaya traverse <S2> --save", cli("traverse", "{S2.id}", "--depth", "2", "--save", "--json", read_saved=True), NOLEAK + " — also in the saved queries/ note")
case("trace-alice-card", "cli-navigate", "alaya trace <alice id>", cli("trace", "{A1.id}", "--json"), MISSING,
     check=missing(["{A1.id}"], ["card-0badc0de"], cli("trace", "card-0badc0de", "--json")))
case("trace-shared-citing-alice-session", "cli-navigate", "alaya trace <shared card citing alice's turn> --context 3", cli("trace", "{S8.id}", "--context", "3", "--json"),
     NOLEAK + " (her turn is unresolved evidence, as a missing session would be)")
case("trace-distilled-alice-card", "cli-navigate", "alaya trace <a card distilled from alice's session>", cli("trace", "{AD.id}"), MISSING,
     check=missing(["{AD.id}"], ["card-0badc0de"], cli("trace", "card-0badc0de")))
case("context-query", "cli-navigate", "alaya context --query … --json", cli("context", "--query", "warehouse cutover rollback window and budget", "--budget", "6000", "--json"), NOLEAK)
case("context-query-zh", "cli-navigate", "alaya context --query <Chinese>", cli("context", "--query", "数据库迁移 密钥轮换 机房", "--budget", "6000"), NOLEAK, lang="zh")
case("context-plain", "cli-navigate", "alaya context (persona + MEMORY.md)", cli("context", "--budget", "20000"), NOLEAK)

# ---------------------------------------------------------------- inventory
case("status-text", "cli-inventory", "alaya status (text)", cli("status"), NOLEAK)
case("schema-relations-text", "cli-inventory", "alaya schema --relations (text)", cli("schema", "--relations"), NOLEAK)
case("schema-node-types-text", "cli-inventory", "alaya schema --node-types (text)", cli("schema", "--node-types"), NOLEAK)
case("export-markdown", "cli-inventory", "alaya export --format markdown", cli("export", "--format", "markdown", "--output", "{OUT}/export-md", "--json", scan_paths=["{OUT}/export-md"]), NOLEAK + " — in the output and in every exported file's name and text")
case("export-graphml", "cli-inventory", "alaya export --format graphml", cli("export", "--format", "graphml", "--output", "{OUT}/graph.graphml", "--json", scan_paths=["{OUT}/graph.graphml"]), NOLEAK + " — in the GraphML too")
case("doctor-text", "cli-inventory", "alaya doctor", cli("doctor"), NOLEAK)
case("lint-json", "cli-inventory", "alaya lint --format json", cli("lint", "--format", "json"), NOLEAK + " (no finding on alice's files: broken link, secret, duplicate)")
case("lint-sarif", "cli-inventory", "alaya lint --format sarif --output", cli("lint", "--format", "sarif", "--output", "{OUT}/lint.sarif", scan_paths=["{OUT}/lint.sarif"]), NOLEAK)
case("lint-strict-text", "cli-inventory", "alaya lint --strict", cli("lint", "--strict"), NOLEAK)
case("lint-write-report", "cli-inventory", "alaya lint --write-report --commit (by bob)", cli("lint", "--write-report", "--commit", read_files=["reports/lint.md"]), NOLEAK + " — also in reports/lint.md as bob's run wrote it")
case("lint-select-secret", "cli-inventory", "alaya lint --select secret-detected,broken-wikilink,unresolved-link", cli("lint", "--select", "secret-detected,unresolved-link", "--format", "json"), NOLEAK)
case("compile-json", "cli-inventory", "alaya compile --json (by bob)", cli("compile", "--json"), NOLEAK)
case("eval-dataset-alice-ids", "cli-inventory", "alaya eval --dataset <questions expecting alice's cards>",
     cli("eval", "--dataset", "{OUT}/qa.json", "--output", "{OUT}/eval-report.json", "--json", write_json={"{OUT}/qa.json": {"qa_pairs": [
         {"type": "FACT", "query": "what is the rollback window for the warehouse cutover", "expected_cards": ["{A1.id}"], "difficulty": "easy"},
         {"type": "FACT", "query": "数据库迁移的密钥在哪里轮换", "expected_cards": ["{A2.id}"], "difficulty": "easy"},
         {"type": "NAVIGATION", "query": "from the checklist to the runbook", "expected_path": ["{S2.id}", "{A1.id}"], "difficulty": "hard"}]}},
         scan_paths=["{OUT}/eval-report.json"]),
     "recall@5 of questions whose only answers are alice's cards is 0 (a hit would say they exist), and no alice marker in the report (her ids, which bob typed, removed)",
     check={"type": "eval_zero"}, echo=["{A1.id}", "{A2.id}"])
case("eval-dataset-namespace", "cli-inventory", "alaya eval --dataset with \"namespace\": \"alice\" per question",
     cli("eval", "--dataset", "{OUT}/qa2.json", "--output", "{OUT}/eval-report2.json", "--json", write_json={"{OUT}/qa2.json": {"qa_pairs": [
         {"type": "FACT", "query": "rollback window sign off", "expected_cards": ["{S2.id}"], "namespace": "alice", "difficulty": "easy"},
         {"type": "FACT", "query": "密钥轮换 机房", "expected_cards": ["{S5.id}"], "namespace": "alice-main", "difficulty": "easy"}]}},
         scan_paths=["{OUT}/eval-report2.json"]), NOLEAK + " — in the report file too")

# ---------------------------------------------------------------- writes
case("link-to-alice-title", "cli-write", "alaya link <bob card> <alice title>", cli("link", "{B1.id}", "{A1.title}", "--rel", "RELATES_TO", "--json"), MISSING_W,
     check=missing(["{A1.title}"], ["Kestrel warehouse cutover notebook"], cli("link", "{B1.id}", "Kestrel warehouse cutover notebook", "--rel", "RELATES_TO", "--json")), unchanged=True)
case("link-from-alice-id", "cli-write", "alaya link <alice id> <shared card>", cli("link", "{A1.id}", "{S3.id}", "--rel", "RELATES_TO", "--json"), MISSING_W,
     check=missing(["{A1.id}"], ["card-0badc0de"], cli("link", "card-0badc0de", "{S3.id}", "--rel", "RELATES_TO", "--json")), unchanged=True)
case("link-shared-to-alice", "cli-write", "alaya link <shared card> <alice alias>", cli("link", "{S1.id}", "Operation Wolfsbane", "--rel", "DEPENDS_ON", "--json"), MISSING_W,
     check=missing(["Operation Wolfsbane"], ["Operation Nightshade"], cli("link", "{S1.id}", "Operation Nightshade", "--rel", "DEPENDS_ON", "--json")), unchanged=True)
case("link-zh-alice", "cli-write", "alaya link <bob card> <alice Chinese title>", cli("link", "{B1.id}", "{A2.title}", "--json"), MISSING_W, lang="zh",
     check=missing(["{A2.title}"], ["白鹭计划的数据库迁移"], cli("link", "{B1.id}", "白鹭计划的数据库迁移", "--json")), unchanged=True)
case("link-ambiguous-alias-to-shared", "cli-write", "alaya link <bob card> \"release train\" (alias shared with alice)", cli("link", "{B1.id}", "release train", "--rel", "REFERENCES", "--json"),
     NOLEAK + "; the relation lands on the shared train card and alice's files are unchanged", unchanged=True)
case("unlink-alice-relation", "cli-write", "alaya unlink <alice id> <shared card> (her relation exists)", cli("unlink", "{A1.id}", "{S2.id}", "--json"), MISSING_W,
     check=missing(["{A1.id}"], ["card-0badc0de"], cli("unlink", "card-0badc0de", "{S2.id}", "--json")), unchanged=True)
case("unlink-shared-to-alice", "cli-write", "alaya unlink <shared train card> <alice card it points at>", cli("unlink", "{S4.id}", "{A3.id}", "--json"), MISSING_W,
     check=missing(["{A3.id}"], ["card-0badc0de"], cli("unlink", "{S4.id}", "card-0badc0de", "--json")), unchanged=True)
case("feedback-useful-alice", "cli-write", "alaya feedback useful <alice id>", cli("feedback", "useful", "{A1.id}", "--json"), MISSING_W,
     check=missing(["{A1.id}"], ["card-0badc0de"], cli("feedback", "useful", "card-0badc0de", "--json")), unchanged=True)
case("feedback-not-useful-alias", "cli-write", "alaya feedback not-useful <alice alias>", cli("feedback", "not-useful", "Operation Wolfsbane"), MISSING_W,
     check=missing(["Operation Wolfsbane"], ["Operation Nightshade"], cli("feedback", "not-useful", "Operation Nightshade")), unchanged=True)
case("feedback-correct-alice", "cli-write", "alaya feedback correct <alice id> --claim c1 --text …", cli("feedback", "correct", "{A1.id}", "--claim", "c1", "--text", "The rollback window is 10 minutes.", "--json"), MISSING_W,
     check=missing(["{A1.id}"], ["card-0badc0de"], cli("feedback", "correct", "card-0badc0de", "--claim", "c1", "--text", "The rollback window is 10 minutes.", "--json")), unchanged=True)
case("feedback-deprecate-alice-zh", "cli-write", "alaya feedback deprecate <alice Chinese title>", cli("feedback", "deprecate", "{A2.title}", "--reason", "过期了", "--json"), MISSING_W, lang="zh",
     check=missing(["{A2.title}"], ["白鹭计划的数据库迁移"], cli("feedback", "deprecate", "白鹭计划的数据库迁移", "--reason", "过期了", "--json")), unchanged=True)
case("promote-shared-alice", "cli-write", "alaya promote-shared <alice id>", cli("promote-shared", "{A1.id}", "--json"), MISSING_W,
     check=missing(["{A1.id}"], ["card-0badc0de"], cli("promote-shared", "card-0badc0de", "--json")), unchanged=True)
case("promote-shared-alice-main", "cli-write", "alaya promote-shared <alice-main title>", cli("promote-shared", "Marrowglen budget notes", "--json"), MISSING_W,
     check=missing(["Marrowglen budget notes"], ["Heathrow budget notes"], cli("promote-shared", "Heathrow budget notes", "--json")), unchanged=True)
case("restore-alice-archived", "cli-write", "alaya restore <alice's archived card>", cli("restore", "{A10.id}", "--json"), MISSING_W,
     check=missing(["{A10.id}"], ["card-0badc0de"], cli("restore", "card-0badc0de", "--json")), unchanged=True)
case("new-namespace-alice", "cli-write", "alaya new --namespace alice", cli("new", "--title", "Bob writes into another namespace", "--namespace", "alice", "--json"),
     "refused exactly as --namespace carol (exit code and normalised message), nothing written into alice's namespace",
     check=missing(["alice"], ["carol"], cli("new", "--title", "Bob writes into another namespace", "--namespace", "carol", "--json")), unchanged=True)
case("new-namespace-alice-ephemeral", "cli-write", "alaya new --namespace alice-ephemeral", cli("new", "--title", "Bob scratch in alice scratch", "--namespace", "alice-ephemeral", "--json"),
     "same as --namespace carol-ephemeral", check=missing(["alice-ephemeral"], ["carol-ephemeral"], cli("new", "--title", "Bob scratch in alice scratch", "--namespace", "carol-ephemeral", "--json")), unchanged=True)
case("new-relation-to-alice", "cli-write", "alaya new - with a relation to alice's card", cli("new", "-", "--json", stdin_json={"title": "Bob: M&A rumour log", "type": "fact", "relations": [{"type": "RELATES_TO", "target": "Acquisition shortlist for Q3"}]}),
     MISSING_W + " (the control names a target that does not exist)",
     check=missing(["Acquisition shortlist for Q3", "Bob: M&A rumour log"], ["Acquisition shortlist for Q4", "Bob: M&A rumour notes"], cli("new", "-", "--json", stdin_json={"title": "Bob: M&A rumour notes", "type": "fact", "relations": [{"type": "RELATES_TO", "target": "Acquisition shortlist for Q4"}]})), unchanged=True)
case("new-title-collision", "oracle", "alaya new --title <exact title and type of an alice card> (file name alaya picks)",
     cli("new", "--title", "Reorg plan for the platform team", "--type", "decision", "--json"),
     "bob's card gets the plain file name cards/decision/<title>.md like the control title does (no ' (card-…)' suffix, no warning, no refusal), and alice's card is byte-identical",
     check={"type": "collision", "probe_refs": ["Reorg plan for the platform team"], "control_refs": ["Reorg plan for the data team"],
            "control": cli("new", "--title", "Reorg plan for the data team", "--type", "decision", "--json"),
            "expect_path": "cards/decision/Reorg plan for the platform team.md"}, unchanged=True)
case("lint-unresolved-link-oracle", "oracle", "alaya lint on bob's [[link]] to an alice title vs. to a missing title",
     {"seq": [cli("new", "--title", "Bob: rumours about the Q3 shortlist", "--type", "fact", "--body", "Heard about [[Acquisition shortlist for Q3]] at lunch.", "--json"),
              cli("new", "--title", "Bob: rumours about the Q4 shortlist", "--type", "fact", "--body", "Heard about [[Acquisition shortlist for Q4]] at lunch.", "--json"),
              cli("lint", "--format", "json")]},
     "lint reports bob's link to alice's title exactly as his link to a title that does not exist (same codes and messages once titles are normalised)",
     check={"type": "lint_link_oracle"})
case("traverse-bob-link-to-alice-title", "oracle", "alaya traverse <bob card whose body links alice's title>", cli("traverse", "Bob: rumours about the Q3 shortlist", "--depth", "1", "--json"),
     NOLEAK + " (his [[link]] does not resolve into her note)")
case("distill-alice-session", "cli-write", "alaya distill --session <alice session id>", cli("distill", "--session", "sess-nightjar-0412", "--json"), MISSING_W,
     check=missing(["sess-nightjar-0412"], ["sess-nightjar-0499"], cli("distill", "--session", "sess-nightjar-0499", "--json")), unchanged=True)
case("distill-all", "cli-write", "alaya distill --all (by bob)", cli("distill", "--all", "--json"), NOLEAK + "; every alice file byte-identical (her sessions are not re-distilled into bob's or shared cards)", unchanged=True)
case("ingest-alice-session-id", "cli-write", "alaya ingest <bob's file reusing alice's session id>",
     cli("ingest", "{OUT}/bob-0412.json", "--json", write_json={"{OUT}/bob-0412.json": {"id": "sess-nightjar-0412", "timestamp": 1775984400000, "channel": "cli", "agent": "bob", "turns": [{"role": "user", "name": "Bob", "content": "Standup: CI is green again.", "timestamp": 1775984400000}]}}),
     NOLEAK + " (no quote of her stored turns in a mismatch error); her session note and raw file byte-identical", unchanged=True)
case("ingest-id-oracle", "oracle", "alaya ingest: alice's session id vs. a fresh id",
     cli("ingest", "{OUT}/bob-0419.json", "--json", write_json={"{OUT}/bob-0419.json": {"id": "sess-nightjar-0419", "timestamp": 1776589200000, "channel": "cli", "agent": "bob", "turns": [{"role": "user", "name": "Bob", "content": "Retro: the flaky checkout test is fixed.", "timestamp": 1776589200000}]}}),
     "bob's ingest under alice's session id behaves exactly like his ingest of the same file under a fresh id (exit code, normalised output) — otherwise the answer says her session exists",
     check=missing(["sess-nightjar-0419"], ["sess-nightjar-0420"], cli("ingest", "{OUT}/bob-0420.json", "--json", write_json={"{OUT}/bob-0420.json": {"id": "sess-nightjar-0420", "timestamp": 1776589200000, "channel": "cli", "agent": "bob", "turns": [{"role": "user", "name": "Bob", "content": "Retro: the flaky checkout test is fixed.", "timestamp": 1776589200000}]}})), unchanged=True)
case("capture-alice-session-id", "cli-write", "alaya capture - --session <alice session id>",
     cli("capture", "-", "--session", "sess-nightjar-0412", "--json", stdin='{"role": "user", "content": "Bob: appending to whatever this is.", "name": "Bob"}\n'),
     NOLEAK + "; her session note and raw file byte-identical", unchanged=True)
case("review-list", "cli-write", "alaya review list --json (by bob)", cli("review", "list", "--json"), NOLEAK + " (alice's pending card not listed)")
case("review-approve-alice", "cli-write", "alaya review approve <alice proposal id>", cli("review", "approve", "{A11.id}", "--json"), MISSING,
     check=missing(["{A11.id}"], ["card-0badc0de"], cli("review", "approve", "card-0badc0de", "--json")))
case("review-edit-alice", "cli-write", "alaya review edit <alice proposal> --text-file", cli("review", "edit", "{A11.id}", "--text-file", "{OUT}/edit.md", "--json", write_text={"{OUT}/edit.md": "---\ntitle: hijacked\n---\nbob was here\n"}), MISSING,
     check=missing(["{A11.id}"], ["card-0badc0de"], cli("review", "edit", "card-0badc0de", "--text-file", "{OUT}/edit.md", "--json")))
case("malformed-doctor", "oracle", "alaya doctor --json with a broken alice note", cli("doctor", "--json"), "the malformed alice note (a person broke its YAML; its namespace line still says alice) is not named to bob", markers="malformed")
case("malformed-lint", "oracle", "alaya lint --format json with a broken alice note", cli("lint", "--format", "json"), "not named to bob", markers="malformed")
case("malformed-compile", "oracle", "alaya compile --json with a broken alice note", cli("compile", "--json"), "not named to bob", markers="malformed")
case("malformed-recall", "oracle", "alaya recall with a broken alice note", cli("recall", "contract renews in May", "--all-namespaces", "--json"), "not named to bob", markers="malformed")

# ---------------------------------------------------------------- agent names
for nm, slug, lang in [("", "empty", "en"), (" ", "space", "en"), ("\t", "tab", "en"), ("shared", "shared", "en"),
                       ("alice-main", "alice-main", "en"), ("alice-ephemeral", "alice-ephemeral", "en"),
                       ("Alice", "capital-Alice", "en"), ("\u0430lice", "cyrillic-a-lice", "en"), ("bob,alice", "comma-list", "en"),
                       ("*", "wildcard", "en"), ("../alice", "dotdot", "en"), ("青鸾", "zh-name", "zh")]:
    case(f"agent-name-{slug}", "agent-name", f"alaya --agent {json.dumps(nm)} recall/show",
         {"seq": [cli("recall", "rollback window budget code cap scratch draft 密钥 迁移", "--all-namespaces", "--json", "--top-k", "50", agent=nm),
                  cli("show", "{A8.id}", "--json", agent=nm), cli("show", "{A9.id}", "--json", agent=nm)]},
         "refused, or served as an agent with no private notes: never the owner's view, never alice's or alice-main's/alice-ephemeral's notes (" + NOLEAK + ")",
         lang=lang, echo=["{A8.id}", "{A9.id}"] + (["青鸾"] if slug == "zh-name" else []))
case("agent-env-space", "agent-name", "ALAYA_AGENT=' ' alaya recall", {"seq": [cli("recall", "rollback window budget code", "--all-namespaces", "--json", agent=None, agent_env=" "), cli("show", "{A1.id}", "--json", agent=None, agent_env=" ")]},
     "a blank ALAYA_AGENT is refused or is a name without private notes, never alice's view", echo=["{A1.id}"])

# ---------------------------------------------------------------- MCP (alaya mcp --agent bob, stdio)
def mcp(op, server="bob"):
    return {"mcp": op, "server": server}


MP = "mcp"
case("mcp-list-tools", MP, "MCP tools/list (descriptions, enums)", mcp({"list": "tools"}), NOLEAK + " (no alice card type, relation type or title in any schema)", phase="mcp")
case("mcp-list-resources", MP, "MCP resources/list + templates", mcp({"list": "resources"}), NOLEAK, phase="mcp")
case("mcp-list-prompts", MP, "MCP prompts/list", mcp({"list": "prompts"}), NOLEAK, phase="mcp")
case("mcp-resource-digest", MP, "MCP resource alaya://digest", mcp({"resource": "alaya://digest"}), NOLEAK, phase="mcp")
case("mcp-resource-memory", MP, "MCP resource alaya://memory", mcp({"resource": "alaya://memory"}), NOLEAK, phase="mcp")
case("mcp-resource-persona", MP, "MCP resource alaya://persona", mcp({"resource": "alaya://persona"}), NOLEAK, phase="mcp")
case("mcp-resource-note-id", MP, "MCP resource alaya://note/<alice id>", mcp({"resource": "alaya://note/{A1.id}"}), MISSING, phase="mcp",
     check=missing(["{A1.id}"], ["card-0badc0de"], mcp({"resource": "alaya://note/card-0badc0de"})))
case("mcp-resource-note-path", MP, "MCP resource alaya://note/<url-encoded alice path>", mcp({"resource": "alaya://note/{A1.path_q}"}), MISSING, phase="mcp",
     check=missing(["{A1.path_q}", "{A1.path}"], ["cards%2Fkestrelplan%2FUnknown%20cutover%20runbook.md", "cards/kestrelplan/Unknown cutover runbook.md"], mcp({"resource": "alaya://note/cards%2Fkestrelplan%2FUnknown%20cutover%20runbook.md"})))
case("mcp-resource-note-zh", MP, "MCP resource alaya://note/<alice Chinese alias>", mcp({"resource": "alaya://note/{ZH_ALIAS_Q}"}), MISSING, phase="mcp", lang="zh",
     check=missing(["{ZH_ALIAS_Q}", "青鸾迁移"], ["{ZH_CTRL_Q}", "白鹭迁移"], mcp({"resource": "alaya://note/{ZH_CTRL_Q}"})))
case("mcp-get-id", MP, "MCP get <alice id>", mcp({"tool": "get", "args": {"ref": "{A1.id}"}}), MISSING, phase="mcp",
     check=missing(["{A1.id}"], ["card-0badc0de"], mcp({"tool": "get", "args": {"ref": "card-0badc0de"}})))
case("mcp-get-alias", MP, "MCP get <alice alias>", mcp({"tool": "get", "args": {"ref": "Operation Wolfsbane"}}), MISSING, phase="mcp",
     check=missing(["Operation Wolfsbane"], ["Operation Nightshade"], mcp({"tool": "get", "args": {"ref": "Operation Nightshade"}})))
case("mcp-get-zh-title", MP, "MCP get <alice Chinese title>", mcp({"tool": "get", "args": {"ref": "{A2.title}"}}), MISSING, phase="mcp", lang="zh",
     check=missing(["{A2.title}"], ["白鹭计划的数据库迁移"], mcp({"tool": "get", "args": {"ref": "白鹭计划的数据库迁移"}})))
case("mcp-get-session", MP, "MCP get <alice session id>", mcp({"tool": "get", "args": {"ref": "sess-nightjar-0419"}}), MISSING, phase="mcp",
     check=missing(["sess-nightjar-0419"], ["sess-nightjar-0499"], mcp({"tool": "get", "args": {"ref": "sess-nightjar-0499"}})))
case("mcp-get-alias-shared-collision", MP, "MCP get \"release train\" (alias shared with alice)", mcp({"tool": "get", "args": {"ref": "release train"}}),
     "returns the shared train card, not an ambiguity naming alice's", phase="mcp", check={"type": "resolves_to", "id": "{S4.id}"})
case("mcp-recall", MP, "MCP recall <free text>", mcp({"tool": "recall", "args": {"query": "rollback window for the warehouse cutover budget code", "top_k": 30}}), NOLEAK, phase="mcp")
case("mcp-recall-zh", MP, "MCP recall <Chinese>", mcp({"tool": "recall", "args": {"query": "数据库迁移 密钥轮换 仓库 推迟", "top_k": 30}}), NOLEAK, phase="mcp", lang="zh")
case("mcp-recall-from-nodes", MP, "MCP recall from_nodes [shared checklist] depth 3", mcp({"tool": "recall", "args": {"from_nodes": ["{S2.id}", "{S1.id}"], "depth": 3}}), NOLEAK, phase="mcp")
case("mcp-recall-from-alice", MP, "MCP recall from_nodes [alice id]", mcp({"tool": "recall", "args": {"from_nodes": ["{A1.id}"], "depth": 2}}), MISSING, phase="mcp",
     check=missing(["{A1.id}"], ["card-0badc0de"], mcp({"tool": "recall", "args": {"from_nodes": ["card-0badc0de"], "depth": 2}})))
case("mcp-recall-kinds-session", MP, "MCP recall kinds [session]", mcp({"tool": "recall", "args": {"query": "depot generator rental, spare parts budget", "kinds": ["session"]}}), NOLEAK, phase="mcp")
case("mcp-recall-bm25-tags", MP, "MCP recall mode bm25 + tags [alice's tag]", mcp({"tool": "recall", "args": {"query": "runbook", "mode": "bm25", "tags": ["ledgerfox"]}}), NOLEAK, phase="mcp", echo=["ledgerfox"])
case("mcp-recall-relations", MP, "MCP recall concepts + relations [DEPENDS_ON, ORCHID_BLOCKS]", mcp({"tool": "recall", "args": {"concepts": ["warehouse cutover", "webhook retries"], "relations": ["DEPENDS_ON", "ORCHID_BLOCKS"], "depth": 2}}), NOLEAK, phase="mcp", echo=["ORCHID_BLOCKS"])
case("mcp-trace-alice", MP, "MCP trace <alice id>", mcp({"tool": "trace", "args": {"card": "{A1.id}"}}), MISSING, phase="mcp",
     check=missing(["{A1.id}"], ["card-0badc0de"], mcp({"tool": "trace", "args": {"card": "card-0badc0de"}})))
case("mcp-trace-shared-cites-alice", MP, "MCP trace <shared card citing alice's turn>", mcp({"tool": "trace", "args": {"card": "{S8.id}", "context": 3}}), NOLEAK, phase="mcp")
case("mcp-traverse-path", MP, "MCP traverse a=S1 b=S2", mcp({"tool": "traverse", "args": {"a": "{S1.id}", "b": "{S2.id}", "max_hops": 4}}), NOLEAK, phase="mcp")
case("mcp-traverse-alice", MP, "MCP traverse a=<alice title>", mcp({"tool": "traverse", "args": {"a": "{A1.title}"}}), MISSING, phase="mcp",
     check=missing(["{A1.title}"], ["Kestrel warehouse cutover notebook"], mcp({"tool": "traverse", "args": {"a": "Kestrel warehouse cutover notebook"}})))
case("mcp-context", MP, "MCP context query", mcp({"tool": "context", "args": {"query": "warehouse cutover rollback window and the depot", "budget": 8000}}), NOLEAK, phase="mcp")
case("mcp-status", MP, "MCP status", mcp({"tool": "status", "args": {}}),
     NOLEAK + "; and its counts equal those of bob's CLI `status --json` run at the same moment (twin-status compares the CLI with the twin)", phase="mcp", check={"type": "same_as_cli", "extract": "status", "cli": cli("status", "--json")})
case("mcp-schema-relations", MP, "MCP schema relations", mcp({"tool": "schema", "args": {"what": "relations"}}), NOLEAK, phase="mcp")
case("mcp-schema-node-types", MP, "MCP schema node-types", mcp({"tool": "schema", "args": {"what": "node-types"}}), NOLEAK, phase="mcp")
case("mcp-new-collision", MP, "MCP new with the exact title of an alice card (file name alaya picks)", mcp({"tool": "new", "args": {"title": "Severance terms for the Lisbon office", "type": "decision", "content": "Bob's guess."}}),
     "bob's card gets cards/decision/<title>.md like the control title does; alice's card byte-identical", phase="mcp",
     check={"type": "collision", "probe_refs": ["Severance terms for the Lisbon office"], "control_refs": ["Severance terms for the Porto office"],
            "control": mcp({"tool": "new", "args": {"title": "Severance terms for the Porto office", "type": "decision", "content": "Bob's guess."}}),
            "expect_path": "cards/decision/Severance terms for the Lisbon office.md"}, unchanged=True)
case("mcp-new-content-link", MP, "MCP new with content linking alice's (guessable) title", mcp({"tool": "new", "args": {"title": "Bob: acquisition gossip", "type": "fact", "content": "Someone mentioned [[Acquisition shortlist for Q3]] in the kitchen."}}),
     NOLEAK + " (the link does not pull her card's words or id into the answer)", phase="mcp", unchanged=True)
case("mcp-link-alice", MP, "MCP link a=<bob card> b=<alice id>", mcp({"tool": "link", "args": {"a": "{B1.id}", "b": "{A1.id}", "rel": "RELATES_TO"}}), MISSING_W, phase="mcp",
     check=missing(["{A1.id}"], ["card-0badc0de"], mcp({"tool": "link", "args": {"a": "{B1.id}", "b": "card-0badc0de", "rel": "RELATES_TO"}})), unchanged=True)
case("mcp-unlink-alice", MP, "MCP unlink a=<alice id> b=<shared>", mcp({"tool": "unlink", "args": {"a": "{A2.id}", "b": "{S5.id}"}}), MISSING_W, phase="mcp",
     check=missing(["{A2.id}"], ["card-0badc0de"], mcp({"tool": "unlink", "args": {"a": "card-0badc0de", "b": "{S5.id}"}})), unchanged=True)
case("mcp-feedback-useful-alice", MP, "MCP feedback useful <alice id>", mcp({"tool": "feedback", "args": {"verdict": "useful", "id": "{A1.id}"}}), MISSING_W, phase="mcp",
     check=missing(["{A1.id}"], ["card-0badc0de"], mcp({"tool": "feedback", "args": {"verdict": "useful", "id": "card-0badc0de"}})), unchanged=True)
case("mcp-feedback-correct-alice", MP, "MCP feedback correct <alice id>", mcp({"tool": "feedback", "args": {"verdict": "correct", "id": "{A7.id}", "claim": "c1", "text": "The session cache TTL is 30 seconds."}}), MISSING_W, phase="mcp",
     check=missing(["{A7.id}"], ["card-0badc0de"], mcp({"tool": "feedback", "args": {"verdict": "correct", "id": "card-0badc0de", "claim": "c1", "text": "The session cache TTL is 30 seconds."}})), unchanged=True)
case("mcp-ingest-alice-session", MP, "MCP ingest a session under alice's session id", mcp({"tool": "ingest", "args": {"session": {"id": "sess-nightjar-0419", "turns": [{"role": "user", "content": "Bob here, what did we say?", "name": "Bob"}]}}}),
     NOLEAK + "; her session files byte-identical", phase="mcp", unchanged=True)
case("mcp-distill-alice-session", MP, "MCP distill session=<alice session id>", mcp({"tool": "distill", "args": {"session": "sess-nightjar-0412"}}), MISSING_W, phase="mcp",
     check=missing(["sess-nightjar-0412"], ["sess-nightjar-0499"], mcp({"tool": "distill", "args": {"session": "sess-nightjar-0499"}})), unchanged=True)
case("mcp-prompt-recall", MP, "MCP prompt recall_before_answering", mcp({"prompt": "recall_before_answering", "args": {"question": "What is the rollback window for the warehouse cutover, and who signed it off?"}}), NOLEAK, phase="mcp")
case("mcp-prompt-recall-zh", MP, "MCP prompt recall_before_answering (Chinese)", mcp({"prompt": "recall_before_answering", "args": {"question": "数据库迁移的密钥在哪个机房轮换？"}}), NOLEAK, phase="mcp", lang="zh")
case("mcp-prompt-save", MP, "MCP prompt save_what_was_learned (cards already known)", mcp({"prompt": "save_what_was_learned", "args": {"summary": "We planned the warehouse cutover: rollback window, budget code, vendor sign-off, depot generator."}}), NOLEAK, phase="mcp")
for nm, slug in [("alice-main", "alice-main"), ("", "empty"), ("shared", "shared")]:
    case(f"mcp-agent-{slug}-get", "agent-name", f"alaya mcp --agent {json.dumps(nm)}: get <alice-main id>", mcp({"tool": "get", "args": {"ref": "{A8.id}"}}, server=nm),
         "the server refuses to start, or does not serve alice's (or alice-main's) note; never the owner's view", phase="mcp", echo=["{A8.id}"])
    case(f"mcp-agent-{slug}-recall", "agent-name", f"alaya mcp --agent {json.dumps(nm)}: recall", mcp({"tool": "recall", "args": {"query": "budget cap this quarter rollback window", "top_k": 50}}, server=nm),
         "as above: no alice marker", phase="mcp")

# ---------------------------------------------------------------- serve
def http(path="/recall", headers=(("X-Alaya-Agent", "bob"),), body=None, method="POST", server="unpinned"):
    return {"http": {"method": method, "path": path, "headers": [list(h) for h in headers], "json": body}, "server": server}


case("serve-recall-bob", "serve", "POST /recall X-Alaya-Agent: bob", http(body={"query": "rollback window for the warehouse cutover budget code", "top_k": 30}), NOLEAK, phase="serve_unpinned")
case("serve-recall-bob-zh", "serve", "POST /recall X-Alaya-Agent: bob (Chinese)", http(body={"query": "数据库迁移的密钥轮换 仓库推迟", "top_k": 30}), NOLEAK, phase="serve_unpinned", lang="zh")
case("serve-namespace-alice", "serve", "POST /recall bob + {\"namespace\": \"alice\"}", http(body={"query": "rollback window", "namespace": "alice"}),
     "same status and normalised body as for namespace carol", phase="serve_unpinned",
     check=missing(["alice"], ["carol"], http(body={"query": "rollback window", "namespace": "carol"})))
case("serve-all-namespaces", "serve", "POST /recall bob + all_namespaces", http(body={"query": "rollback window budget code vendor", "all_namespaces": True, "top_k": 50}), NOLEAK, phase="serve_unpinned")
case("serve-from-alice-node", "serve", "POST /recall bob + from_nodes [alice id]", http(body={"from_nodes": ["{A1.id}"], "depth": 2}), MISSING, phase="serve_unpinned",
     check=missing(["{A1.id}"], ["card-0badc0de"], http(body={"from_nodes": ["card-0badc0de"], "depth": 2})))
case("serve-from-shared-node", "serve", "POST /recall bob + from_nodes [shared] depth 3", http(body={"from_nodes": ["{S2.id}", "{S1.id}"], "depth": 3}), NOLEAK, phase="serve_unpinned")
case("serve-kind-session", "serve", "POST /recall bob + kind session", http(body={"query": "depot generator rental unit", "kind": "session"}), NOLEAK, phase="serve_unpinned")
case("serve-header-alice-main", "agent-name", "POST /recall X-Alaya-Agent: alice-main", http(headers=(("X-Alaya-Agent", "alice-main"),), body={"query": "budget cap this quarter", "all_namespaces": True}),
     "refused, or no alice-main note served", phase="serve_unpinned")
case("serve-header-shared", "agent-name", "POST /recall X-Alaya-Agent: shared", http(headers=(("X-Alaya-Agent", "shared"),), body={"query": "rollback window budget code", "all_namespaces": True}),
     "refused, or only shared notes", phase="serve_unpinned")
case("serve-cli-agent-flag", "serve", "alaya --agent bob recall --json answered through a running serve", cli("recall", "rollback window for the warehouse cutover budget code", "--json", "--top-k", "30"),
     NOLEAK + " (the client must forward --agent, not only ALAYA_AGENT)", phase="serve_unpinned")
case("serve-cli-agent-env", "serve", "ALAYA_AGENT=bob alaya recall --json through serve", cli("recall", "rollback window for the warehouse cutover budget code", "--json", agent=None, agent_env="bob"), NOLEAK, phase="serve_unpinned")
case("serve-cli-stdin-json", "serve", "echo JSON | alaya --agent bob recall --json through serve", cli("recall", "--json", stdin_json={"query": "budget code vendor sign-off", "all_namespaces": True, "top_k": 40}), NOLEAK, phase="serve_unpinned")
case("serve-pinned-no-header", "serve", "serve --agent bob: POST /recall without header", http(headers=(), body={"query": "rollback window budget code vendor", "all_namespaces": True, "top_k": 50}, server="pinned"), NOLEAK, phase="serve_pinned")
case("serve-pinned-header-alice", "serve", "serve --agent bob: X-Alaya-Agent: alice", http(headers=(("X-Alaya-Agent", "alice"),), body={"query": "rollback window budget code"}, server="pinned"), "403 or bob's view: " + NOLEAK, phase="serve_pinned")
case("serve-pinned-header-empty", "agent-name", "serve --agent bob: X-Alaya-Agent: (empty)", http(headers=(("X-Alaya-Agent", ""),), body={"query": "rollback window budget code", "all_namespaces": True}, server="pinned"), "never the owner's view: " + NOLEAK, phase="serve_pinned")
case("serve-pinned-header-case", "agent-name", "serve --agent bob: X-Alaya-Agent: ALICE", http(headers=(("X-Alaya-Agent", "ALICE"),), body={"query": "rollback window budget code", "all_namespaces": True}, server="pinned"), NOLEAK, phase="serve_pinned")
case("serve-pinned-header-dup", "serve", "serve --agent bob: two X-Alaya-Agent headers (bob, alice)", http(headers=(("X-Alaya-Agent", "bob"), ("X-Alaya-Agent", "alice")), body={"query": "rollback window budget code", "all_namespaces": True}, server="pinned"), NOLEAK, phase="serve_pinned")
case("serve-pinned-header-list", "serve", "serve --agent bob: X-Alaya-Agent: bob, alice", http(headers=(("X-Alaya-Agent", "bob, alice"),), body={"query": "rollback window budget code", "all_namespaces": True}, server="pinned"), NOLEAK, phase="serve_pinned")
case("serve-pinned-namespace", "serve", "serve --agent bob: body namespace alice-main", http(headers=(("X-Alaya-Agent", "bob"),), body={"query": "budget cap this quarter", "namespace": "alice-main"}, server="pinned"), NOLEAK, phase="serve_pinned")
case("serve-pinned-health", "serve", "serve --agent bob: GET /health", http(path="/health", headers=(), method="GET", server="pinned"), NOLEAK, phase="serve_pinned")
case("serve-pinned-zh", "serve", "serve --agent bob: Chinese query, no header", http(headers=(), body={"query": "青鸾 紫檀 机房 轮换", "top_k": 30}, server="pinned"), NOLEAK, phase="serve_pinned", lang="zh", echo=["青鸾", "紫檀"])

# ---------------------------------------------------------------- late
case("review-reject-all-by-bob", "cli-write", "alaya review reject --all (by bob)", cli("review", "reject", "--all", "--json"),
     NOLEAK + "; alice's pending proposal is still pending afterwards (the owner's review list still has it)", phase="late", check={"type": "review_survives"})
case("dedup-shared-survives", "oracle", "after introspect: the shared card alice duplicated", cli("show", "{S6.id}", "--json"),
     "bob still reads the shared invoice-exporter card in place (not archived, not merged into alice's copy), no marker", phase="late", check={"type": "note_active"})
case("conflict-shared-claim", "oracle", "after introspect: the shared claim alice contradicted", cli("show", "{S3.id}", "--json"),
     "the shared TTL claim is still `supported` with no contested mark and no link to alice's card: a private claim never changes what bob sees", phase="late", check={"type": "claim_supported", "claim": "c1"})
case("shared-card-linked-by-alice", "derived-files", "show <shared train card alice linked to her card>", cli("show", "{S4.id}", "--raw"),
     NOLEAK + " (the relation line alice's link wrote into the shared card names her card)", phase="late")

# ---------------------------------------------------------------- files bob may read
def rd(*globs, shared_only=False):
    return {"read": list(globs), "shared_only": shared_only}


FD = "derived-files"
case("file-memory-md", FD, "MEMORY.md", rd("MEMORY.md"), NOLEAK, phase="files")
case("file-persona-md", FD, "persona.md", rd("persona.md"), NOLEAK + " (no Saffronbrew / 墨鱼牌 preference)", phase="files")
case("file-scenes", FD, "scenes/*.md (names and text)", rd("scenes/**/*.md"), NOLEAK, phase="files")
case("file-introspect-report", FD, "reports/introspect-*.md", rd("reports/introspect-*.md"), NOLEAK, phase="files")
case("file-lint-report", FD, "reports/lint.md", rd("reports/lint.md"), NOLEAK, phase="files")
case("file-open-questions", FD, "reports/open-questions.md (knowledge gaps from recall telemetry)", rd("reports/open-questions.md"), NOLEAK + " (alice's weak queries 'Gloomwing…', '翡翠港…' are not listed)", phase="files")
case("file-contradictions", FD, "reports/contradictions.md", rd("reports/contradictions.md"), NOLEAK, phase="files")
case("file-other-reports", FD, "every other file under reports/", rd("reports/**/*"), NOLEAK, phase="files")
case("file-shared-entities", FD, "entities/*.md of namespace shared (e.g. Marek Novak's page)", rd("entities/**/*.md", shared_only=True), NOLEAK + " (alice's session facts about Marek Novak stay out)", phase="files")
case("file-shared-queries", FD, "queries/*.md of namespace shared", rd("queries/**/*.md", shared_only=True), NOLEAK, phase="files")
case("file-shared-cards", FD, "every shared card (cards/**, namespace shared)", rd("cards/**/*.md", shared_only=True), NOLEAK, phase="files")
case("file-shared-archive", FD, "archive/*.md of namespace shared", rd("archive/**/*.md", shared_only=True), NOLEAK, phase="files")
case("file-shared-sessions", FD, "shared sessions and their raw files", rd("sessions/**/*", shared_only=True), NOLEAK, phase="files")
case("file-agent-digest", FD, ".alaya/agent-digest.json (shared digest)", rd(".alaya/agent-digest.json"), NOLEAK, phase="files")
case("file-bob-digest", FD, ".alaya/digest/bob.json", rd(".alaya/digest/bob.json"), NOLEAK + " (the Chinese title bob gave his own card in new-title-collision-zh removed)", phase="files", echo=["青鸾计划的数据库迁移"])
case("file-claims-jsonl", FD, ".alaya/claims.jsonl", rd(".alaya/claims.jsonl"), NOLEAK, phase="files")
case("file-agents-md", FD, "AGENTS.md", rd("AGENTS.md"), NOLEAK, phase="files")
case("file-names-shared", FD, "file names of every shared note (names alaya picked)", {"names": True}, NOLEAK + " — checked on the paths only", phase="files")
case("git-shared-diffs", "git-history", "git log -p of every shared file (diffs only)", {"git": "diffs"},
     "no alice marker in any past version of any file bob may read (shared notes, reports, MEMORY.md, persona, scenes)", phase="git")
case("git-shared-messages", "git-history", "commit messages of every commit touching a shared file", {"git": "messages"},
     "no alice marker in the message of a commit that changed a shared file", phase="git")

# ---------------------------------------------------------------- sync
case("sync-by-bob", "sync", "alaya --agent bob sync --no-push --json (both machines edited alice's card and a shared card)", cli("sync", "--no-push", "--json"),
     NOLEAK + " (scalar_conflicts / conflicts name no alice file)", phase="sync")
case("sync-contradictions-report", "sync", "reports/contradictions.md after bob's sync", rd("reports/contradictions.md"), NOLEAK, phase="sync_after")
case("sync-show-contradictions", "sync", "alaya show reports/contradictions.md (bob) after sync", cli("show", "reports/contradictions.md", "--raw"), NOLEAK, phase="sync_after")


# ---------------------------------------------------------------- more Chinese doors
case("show-alice-zh-path", "cli-show", "alaya show <vault path of alice's Chinese card>", cli("show", "{A2.path}", "--json"), MISSING, lang="zh",
     check=missing(["{A2.path}"], ["cards/decision/白鹭计划的数据库迁移.md"], ctl_show("cards/decision/白鹭计划的数据库迁移.md")))
case("traverse-alice-zh", "cli-navigate", "alaya traverse <alice Chinese title> --depth 2", cli("traverse", "{A2.title}", "--depth", "2", "--json"), MISSING, lang="zh",
     check=missing(["{A2.title}"], ["白鹭计划的数据库迁移"], cli("traverse", "白鹭计划的数据库迁移", "--depth", "2", "--json")))
case("trace-alice-zh", "cli-navigate", "alaya trace <alice Chinese alias>", cli("trace", "青鸾迁移", "--json"), MISSING, lang="zh",
     check=missing(["青鸾迁移"], ["白鹭迁移"], cli("trace", "白鹭迁移", "--json")))
case("unlink-alice-zh-relation", "cli-write", "alaya unlink <alice Chinese card> <shared zh card> (her relation exists)", cli("unlink", "{A2.title}", "{S5.title}", "--json"), MISSING_W, lang="zh",
     check=missing(["{A2.title}"], ["白鹭计划的数据库迁移"], cli("unlink", "白鹭计划的数据库迁移", "{S5.title}", "--json")), unchanged=True)
case("feedback-useful-zh-alias", "cli-write", "alaya feedback useful <alice Chinese alias>", cli("feedback", "useful", "青鸾迁移", "--json"), MISSING_W, lang="zh",
     check=missing(["青鸾迁移"], ["白鹭迁移"], cli("feedback", "useful", "白鹭迁移", "--json")), unchanged=True)
case("promote-shared-zh", "cli-write", "alaya promote-shared <alice Chinese title>", cli("promote-shared", "{A2.title}", "--json"), MISSING_W, lang="zh",
     check=missing(["{A2.title}"], ["白鹭计划的数据库迁移"], cli("promote-shared", "白鹭计划的数据库迁移", "--json")), unchanged=True)
case("new-title-collision-zh", "oracle", "alaya new --title <alice's exact Chinese title and type>", cli("new", "--title", "青鸾计划的数据库迁移", "--type", "decision", "--json"),
     "bob's card gets cards/decision/<title>.md like the control title does; alice's card byte-identical", lang="zh",
     check={"type": "collision", "probe_refs": ["青鸾计划的数据库迁移"], "control_refs": ["白鹭计划的数据库迁移"],
            "control": cli("new", "--title", "白鹭计划的数据库迁移", "--type", "decision", "--json"),
            "expect_path": "cards/decision/青鸾计划的数据库迁移.md"}, unchanged=True)
case("recall-zh-session-turns", "cli-recall", "alaya recall --kind session <Chinese>", cli("recall", "仓库的迁移推迟到下个月", "--kind", "session", "--json"), NOLEAK, lang="zh")
case("recall-zh-entity", "cli-recall", "alaya recall --kind entity <Chinese>", cli("recall", "机房的巡检改到每周二 谁同意了", "--kind", "entity", "--json"), NOLEAK, lang="zh")
case("recall-zh-persona-bait", "cli-recall", "alaya recall <Chinese: the user's keyboard preference>", cli("recall", "用户只用什么牌子的键盘", "--all-namespaces", "--format", "prompt"), NOLEAK, lang="zh")
case("context-zh-persona", "cli-navigate", "alaya context --query <Chinese preference question>", cli("context", "--query", "用户喜欢什么键盘和茶", "--json"), NOLEAK, lang="zh")
case("mcp-get-zh-path", MP, "MCP get <alice Chinese path>", mcp({"tool": "get", "args": {"ref": "{A2.path}"}}), MISSING, phase="mcp", lang="zh",
     check=missing(["{A2.path}"], ["cards/decision/白鹭计划的数据库迁移.md"], mcp({"tool": "get", "args": {"ref": "cards/decision/白鹭计划的数据库迁移.md"}})))
case("mcp-context-zh", MP, "MCP context <Chinese query>", mcp({"tool": "context", "args": {"query": "数据库迁移 密钥 机房 巡检", "budget": 8000}}), NOLEAK, phase="mcp", lang="zh")
case("mcp-traverse-zh", MP, "MCP traverse a=<shared zh card> depth 2", mcp({"tool": "traverse", "args": {"a": "{S5.id}", "depth": 2}}), NOLEAK, phase="mcp", lang="zh")
case("mcp-recall-zh-session", MP, "MCP recall kinds [session] <Chinese>", mcp({"tool": "recall", "args": {"query": "仓库迁移推迟 机房巡检改到每周二", "kinds": ["session"]}}), NOLEAK, phase="mcp", lang="zh")
case("serve-zh-session", "serve", "POST /recall bob + kind session <Chinese>", http(body={"query": "仓库的迁移推迟到下个月", "kind": "session"}), NOLEAK, phase="serve_unpinned", lang="zh")

WRITE_ORACLES = {"new-title-collision", "lint-unresolved-link-oracle", "traverse-bob-link-to-alice-title", "ingest-id-oracle", "new-title-collision-zh"}
for c in C:
    if c["phase"] == "main" and (c["category"] == "cli-write" or c["id"] in WRITE_ORACLES):
        c["phase"] = "main_write"
    elif c["phase"] == "main":
        c["phase"] = "main_read"

out = sys.argv[1]
ids = [c["id"] for c in C]
assert len(ids) == len(set(ids)), [i for i in ids if ids.count(i) > 1]
json.dump({"about": "namespace-blind1: bob against alice's private material, door by door. Fixture: fixture.json. Runner: run.py.",
           "cases": C}, open(out, "w"), ensure_ascii=False, indent=1)
print(len(C), "cases")
