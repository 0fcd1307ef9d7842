-- The D1 parity corpus: one statement per line, run in order on sqlite3 and on DuckDB (tests/d1/test_parity.py).
CREATE TABLE short_term_memories (id TEXT PRIMARY KEY, npc_id TEXT NOT NULL, content TEXT NOT NULL, importance REAL DEFAULT 0.5, day INTEGER, hour INTEGER, type TEXT, about TEXT, created_at TEXT DEFAULT CURRENT_TIMESTAMP)
CREATE INDEX IF NOT EXISTS idx_stm_npc_day ON short_term_memories(npc_id, day)
CREATE TABLE IF NOT EXISTS diaries (id INTEGER PRIMARY KEY AUTOINCREMENT, npc_id TEXT NOT NULL, day INTEGER NOT NULL, summary TEXT, UNIQUE(npc_id, day))
CREATE TABLE npc_state (npc_id TEXT PRIMARY KEY, mood TEXT, energy INTEGER DEFAULT 100, last_seen_day INTEGER, flags TEXT DEFAULT '{}')
CREATE TABLE world_events (id INTEGER PRIMARY KEY, day INTEGER, hour INTEGER, kind TEXT, payload TEXT)
CREATE TABLE embedding_outbox (memory_id TEXT PRIMARY KEY, attempts INTEGER NOT NULL DEFAULT 0, last_error TEXT, queued_at TEXT DEFAULT CURRENT_TIMESTAMP)
CREATE TABLE tags (name TEXT PRIMARY KEY, weight REAL) WITHOUT ROWID
CREATE TABLE IF NOT EXISTS diaries (id INTEGER PRIMARY KEY, other TEXT)
INSERT INTO short_term_memories (id, npc_id, content, importance, day, hour, type, about) VALUES ('m1', 'margaret', 'Tom fixed my fence this morning', 0.8, 1, 9, 'observation', 'tom')
INSERT INTO short_term_memories (id, npc_id, content, importance, day, hour, type, about) VALUES ('m2', 'margaret', 'The bakery ran out of bread', 0.3, 1, 11, 'observation', NULL)
INSERT INTO short_term_memories (id, npc_id, content, importance, day, hour, type, about) VALUES ('m3', 'tom', 'Margaret thanked me for the fence', 0.6, 1, 12, 'dialogue', 'margaret')
INSERT INTO short_term_memories (id, npc_id, content, importance, day, hour, type, about) VALUES ('m4', 'tom', 'Storm damaged the mill', 0.9, 2, 7, 'event', NULL), ('m5', 'margaret', 'I heard the mill was damaged', 0.7, 2, 8, 'rumour', 'mill')
INSERT INTO short_term_memories (id, npc_id, content, day, hour) VALUES ('m6', 'ada', 'Quiet day at the library', 3, 15)
INSERT OR IGNORE INTO short_term_memories (id, npc_id, content, day, hour) VALUES ('m1', 'margaret', 'duplicate', 9, 9)
INSERT INTO short_term_memories (id, npc_id, content, day, hour) VALUES ('m1', 'margaret', 'duplicate', 9, 9)
INSERT INTO short_term_memories (id, npc_id, content, importance, day, hour) VALUES ('m2', 'margaret', 'The bakery had fresh bread again', 0.4, 3, 10) ON CONFLICT(id) DO UPDATE SET content = excluded.content, importance = excluded.importance, day = excluded.day
INSERT INTO short_term_memories (id, npc_id, content, day) VALUES ('m6', 'ada', 'ignored', 3) ON CONFLICT(id) DO NOTHING
INSERT INTO short_term_memories (id, npc_id, content, importance, day, hour) VALUES ('m7', 'ada', 'Found an old map in the archive', 0.95, 4, 16) RETURNING id, importance
INSERT INTO short_term_memories (id, content, day) VALUES ('m8', 'no npc', 1)
SELECT id, content FROM short_term_memories WHERE npc_id = 'margaret' ORDER BY day, hour
SELECT id, day, hour FROM short_term_memories ORDER BY day DESC, hour DESC, id
SELECT * FROM short_term_memories WHERE id = 'm1'
SELECT id, npc_id, content, importance, day, hour, type, about FROM short_term_memories ORDER BY id
SELECT count(*) FROM short_term_memories
SELECT COUNT(*) AS n FROM short_term_memories WHERE npc_id = 'tom'
SELECT npc_id, count(*) AS n, max(importance) AS top, min(day) AS first_day FROM short_term_memories GROUP BY npc_id ORDER BY npc_id
SELECT npc_id, count(*) FROM short_term_memories GROUP BY npc_id HAVING count(*) > 1 ORDER BY 2 DESC, 1
SELECT npc_id, avg(importance) AS avg_importance FROM short_term_memories GROUP BY npc_id ORDER BY npc_id
SELECT sum(day), total(day), sum(importance) FROM short_term_memories
SELECT id FROM short_term_memories WHERE content LIKE '%fence%' ORDER BY id
SELECT id FROM short_term_memories WHERE content LIKE '%FENCE%' ORDER BY id
SELECT id FROM short_term_memories WHERE content NOT LIKE '%mill%' ORDER BY id
SELECT id FROM short_term_memories WHERE content LIKE 'the%' ORDER BY id
SELECT id FROM short_term_memories WHERE content LIKE '_he%' ORDER BY id
SELECT id FROM short_term_memories WHERE about IS NULL ORDER BY id
SELECT id FROM short_term_memories WHERE about IS NOT NULL ORDER BY id
SELECT id, ifnull(about, 'nobody') AS about FROM short_term_memories ORDER BY id
SELECT id, coalesce(about, type, 'none') AS what FROM short_term_memories ORDER BY id
SELECT about FROM short_term_memories ORDER BY about, id
SELECT about FROM short_term_memories ORDER BY about DESC, id
SELECT id FROM short_term_memories WHERE day BETWEEN 2 AND 3 ORDER BY id
SELECT id FROM short_term_memories WHERE npc_id IN ('tom', 'ada') ORDER BY id
SELECT id FROM short_term_memories WHERE importance > 0.5 AND day < 3 ORDER BY importance DESC
SELECT id FROM short_term_memories ORDER BY importance DESC LIMIT 3
SELECT id FROM short_term_memories ORDER BY id LIMIT 2 OFFSET 2
SELECT DISTINCT npc_id FROM short_term_memories ORDER BY npc_id
SELECT count(DISTINCT npc_id) FROM short_term_memories
SELECT length(created_at), substr(created_at, 5, 1), substr(created_at, 11, 1) FROM short_term_memories WHERE id = 'm1'
SELECT created_at = (SELECT created_at FROM short_term_memories WHERE id = 'm3') FROM short_term_memories WHERE id = 'm1'
SELECT id, upper(npc_id), lower('ABC'), length(content) FROM short_term_memories ORDER BY id
SELECT instr(content, 'fence'), substr(content, 1, 3), substr(content, 5) FROM short_term_memories WHERE id = 'm1'
SELECT replace(content, 'fence', 'gate'), trim('  padded  '), ltrim('xxab', 'x'), rtrim('abyy', 'y') FROM short_term_memories WHERE id = 'm1'
SELECT group_concat(id) FROM (SELECT id FROM short_term_memories WHERE npc_id = 'margaret' ORDER BY id)
SELECT npc_id || ':' || id AS tag FROM short_term_memories ORDER BY tag
SELECT id, CASE WHEN importance >= 0.7 THEN 'high' WHEN importance >= 0.4 THEN 'mid' ELSE 'low' END AS level FROM short_term_memories ORDER BY id
SELECT typeof(id), typeof(importance), typeof(day), typeof(about) FROM short_term_memories WHERE id = 'm2'
SELECT typeof(1), typeof(1.5), typeof('x'), typeof(NULL), typeof(x'00')
SELECT 7 / 2, -7 / 2, 7.0 / 2, 7 / 2.0, 7 % 3, 1 / 0
SELECT 10 / 3 * 3, (10 / 4) + 0.5
SELECT abs(-5), round(2.567, 2), round(2.5), max(3, 7, 5), min(3, 7, 5)
SELECT max(1, NULL), min(NULL, 2)
SELECT nullif(1, 1), nullif(1, 2), iif(1 > 2, 'yes', 'no')
SELECT CAST(3.7 AS INTEGER), CAST('42' AS INTEGER), CAST(5 AS TEXT), CAST('2.5' AS REAL)
SELECT 1 = 1, 1 < 2, 'a' = 'A', NULL IS NULL
SELECT 'abc' LIKE 'ABC', 'abc' LIKE 'a%', 'abc' GLOB 'a*', 'abc' GLOB 'A*'
SELECT length(''), length(NULL), upper(NULL)
SELECT datetime('2024-01-01 10:00:00', '+1 day'), date('2024-03-05 12:00:00'), time('2024-03-05 12:34:56')
SELECT datetime(1700000000, 'unixepoch'), strftime('%s', '2024-01-01 00:00:00'), unixepoch('2024-01-01')
SELECT strftime('%Y-%m-%d %H:%M', '2024-02-29 23:59:59'), strftime('%j', '2024-12-31'), julianday('2024-01-01')
SELECT date('2024-01-31', '+1 month'), date('2024-03-01', '-1 day'), date('2024-01-15', 'start of month')
SELECT length(datetime('now')), length(date('now')), length(time('now')), length(CURRENT_TIMESTAMP), length(CURRENT_DATE)
SELECT unixepoch() > 1700000000, datetime('now') = CURRENT_TIMESTAMP
SELECT datetime('not a date'), date(NULL)
INSERT INTO diaries (npc_id, day, summary) VALUES ('margaret', 1, 'Fence fixed; bread shortage')
INSERT INTO diaries (npc_id, day, summary) VALUES ('tom', 1, 'Fixed a fence')
INSERT INTO diaries (npc_id, day, summary) VALUES ('tom', 2, 'Storm'), ('margaret', 2, 'Mill rumours')
SELECT id, npc_id, day FROM diaries ORDER BY id
INSERT INTO diaries (npc_id, day, summary) VALUES ('ada', 3, 'Library') RETURNING id, npc_id
INSERT OR IGNORE INTO diaries (npc_id, day, summary) VALUES ('tom', 1, 'dup')
INSERT INTO diaries (npc_id, day, summary) VALUES ('tom', 1, 'dup')
INSERT INTO diaries (npc_id, day, summary) VALUES ('tom', 1, 'updated') ON CONFLICT(npc_id, day) DO UPDATE SET summary = excluded.summary
SELECT id, summary FROM diaries WHERE npc_id = 'tom' ORDER BY day
INSERT INTO diaries (id, npc_id, day, summary) VALUES (100, 'ada', 9, 'explicit id')
INSERT INTO diaries (npc_id, day, summary) VALUES ('ada', 10, 'after explicit')
SELECT id, day FROM diaries WHERE npc_id = 'ada' ORDER BY id
SELECT last_insert_rowid()
DELETE FROM diaries WHERE id = 101
INSERT INTO diaries (npc_id, day, summary) VALUES ('ada', 11, 'autoincrement does not reuse')
SELECT id FROM diaries WHERE day = 11
INSERT INTO diaries (id, npc_id, day, summary) VALUES (NULL, 'ada', 12, 'null id gets the next')
SELECT id FROM diaries WHERE day = 12
UPDATE diaries SET summary = summary || ' (edited)' WHERE npc_id = 'margaret'
SELECT summary FROM diaries WHERE npc_id = 'margaret' ORDER BY day
INSERT INTO world_events (day, hour, kind, payload) VALUES (1, 6, 'weather', '{"sky": "clear", "temp": 14, "wind": 3.5}')
INSERT INTO world_events (day, hour, kind, payload) VALUES (2, 5, 'weather', '{"sky": "storm", "temp": 9, "tags": ["rain", "wind"], "severe": true}')
INSERT INTO world_events (day, hour, kind, payload) VALUES (2, 9, 'market', '{"stalls": 4, "open": false, "owner": {"name": "Ada"}}')
INSERT INTO world_events (id, day, hour, kind, payload) VALUES (10, 3, 1, 'festival', NULL)
INSERT INTO world_events (day, hour, kind) VALUES (3, 2, 'after ten')
SELECT id, kind FROM world_events ORDER BY id
DELETE FROM world_events WHERE id = 11
INSERT INTO world_events (day, hour, kind) VALUES (3, 3, 'plain rowid reuses the top id')
SELECT id FROM world_events WHERE hour = 3 AND day = 3
SELECT json_extract(payload, '$.sky'), json_extract(payload, '$.temp'), json_extract(payload, '$.wind') FROM world_events WHERE id = 1
SELECT typeof(json_extract(payload, '$.temp')), typeof(json_extract(payload, '$.wind')), typeof(json_extract(payload, '$.sky')) FROM world_events WHERE id = 1
SELECT json_extract(payload, '$.tags'), json_extract(payload, '$.tags[0]'), json_extract(payload, '$.severe') FROM world_events WHERE id = 2
SELECT json_extract(payload, '$.owner.name'), json_extract(payload, '$.open'), json_extract(payload, '$.missing') FROM world_events WHERE id = 3
SELECT payload ->> '$.sky', payload ->> 'temp' FROM world_events WHERE id = 1
SELECT id FROM world_events WHERE json_extract(payload, '$.temp') > 10 ORDER BY id
SELECT id FROM world_events WHERE payload ->> '$.sky' = 'storm'
SELECT kind, count(*) FROM world_events GROUP BY kind ORDER BY kind
SELECT json_extract(NULL, '$.a'), json_extract('{"a": null}', '$.a')
INSERT INTO npc_state (npc_id, mood, energy, last_seen_day) VALUES ('margaret', 'grateful', 80, 1)
INSERT INTO npc_state (npc_id, mood, last_seen_day) VALUES ('tom', 'tired', 2)
INSERT INTO npc_state (npc_id, mood, energy, last_seen_day) VALUES ('tom', 'rested', 95, 3) ON CONFLICT(npc_id) DO UPDATE SET mood = excluded.mood, energy = excluded.energy, last_seen_day = excluded.last_seen_day
INSERT INTO npc_state (npc_id, mood) VALUES ('ada', 'curious') ON CONFLICT(npc_id) DO UPDATE SET mood = excluded.mood
UPDATE npc_state SET energy = energy - 10 WHERE energy > 90
SELECT changes()
UPDATE npc_state SET energy = energy + 5 WHERE npc_id = 'nobody'
SELECT npc_id, mood, energy, last_seen_day, flags FROM npc_state ORDER BY npc_id
SELECT npc_id FROM npc_state WHERE energy = (SELECT max(energy) FROM npc_state)
UPDATE npc_state SET mood = 'happy' WHERE npc_id = 'margaret' RETURNING npc_id, mood
DELETE FROM npc_state WHERE npc_id = 'ada' RETURNING npc_id
SELECT count(*) FROM npc_state
INSERT INTO embedding_outbox (memory_id) VALUES ('m4')
INSERT INTO embedding_outbox (memory_id) VALUES ('m5'), ('m7')
INSERT OR IGNORE INTO embedding_outbox (memory_id) VALUES ('m4')
UPDATE embedding_outbox SET attempts = attempts + 1, last_error = 'timeout' WHERE memory_id = 'm4'
SELECT memory_id, attempts, last_error FROM embedding_outbox ORDER BY memory_id
SELECT o.memory_id, m.content FROM embedding_outbox o JOIN short_term_memories m ON m.id = o.memory_id ORDER BY o.memory_id
SELECT m.id, o.attempts FROM short_term_memories m LEFT JOIN embedding_outbox o ON o.memory_id = m.id ORDER BY m.id
SELECT m.npc_id, count(o.memory_id) AS pending FROM short_term_memories m LEFT JOIN embedding_outbox o ON o.memory_id = m.id GROUP BY m.npc_id ORDER BY m.npc_id
DELETE FROM embedding_outbox WHERE memory_id = 'm5'
DELETE FROM embedding_outbox WHERE attempts > 100
SELECT count(*) FROM embedding_outbox
SELECT id FROM short_term_memories WHERE id NOT IN (SELECT memory_id FROM embedding_outbox) ORDER BY id
SELECT id FROM short_term_memories m WHERE EXISTS (SELECT 1 FROM diaries d WHERE d.npc_id = m.npc_id AND d.day = m.day) ORDER BY id
WITH recent AS (SELECT * FROM short_term_memories WHERE day >= 2) SELECT npc_id, count(*) FROM recent GROUP BY npc_id ORDER BY npc_id
SELECT id FROM short_term_memories WHERE day = 1 UNION SELECT npc_id FROM npc_state ORDER BY 1
SELECT npc_id FROM short_term_memories UNION ALL SELECT npc_id FROM diaries ORDER BY 1
SELECT npc_id, day, count(*) OVER (PARTITION BY npc_id) AS n FROM diaries ORDER BY npc_id, day
SELECT id, row_number() OVER (ORDER BY importance DESC) AS rank FROM short_term_memories WHERE importance IS NOT NULL ORDER BY rank
INSERT INTO tags (name, weight) VALUES ('fence', 1.5), ('mill', 2.0)
INSERT OR REPLACE INTO tags (name, weight) VALUES ('fence', 3.0)
REPLACE INTO tags (name, weight) VALUES ('mill', 0.5)
SELECT name, weight FROM tags ORDER BY name
INSERT INTO tags VALUES ('bread', NULL)
SELECT name FROM tags WHERE weight IS NULL
UPDATE tags SET weight = weight * 2
SELECT sum(weight), count(weight), count(*) FROM tags
SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name
SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name
SELECT sql FROM sqlite_master WHERE name = 'npc_state'
PRAGMA table_info(short_term_memories)
PRAGMA table_info('diaries')
ALTER TABLE npc_state ADD COLUMN home TEXT DEFAULT 'village'
SELECT npc_id, home FROM npc_state ORDER BY npc_id
PRAGMA table_info(npc_state)
CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL DEFAULT 0, active BOOLEAN DEFAULT 1, updated DATETIME)
INSERT INTO counters (name) VALUES ('ticks')
INSERT INTO counters (name, value) VALUES ('ticks', 1) ON CONFLICT(name) DO UPDATE SET value = counters.value + excluded.value
INSERT INTO counters (name, value) VALUES ('ticks', 1) ON CONFLICT(name) DO UPDATE SET value = value + 1
SELECT name, value, active, typeof(active) FROM counters
INSERT INTO counters (name, value, active, updated) VALUES ('big', 9007199254740991, 0, '2024-05-01 10:00:00')
SELECT value, active, updated FROM counters WHERE name = 'big'
SELECT value + 1 FROM counters WHERE name = 'ticks'
INSERT INTO counters (name, value) VALUES (NULL, 1)
INSERT INTO counters (name, value) VALUES (NULL, 2)
SELECT name, value FROM counters WHERE name IS NULL ORDER BY value
INSERT INTO tags (name, weight) VALUES (NULL, 1.0)
CREATE TABLE pairs (a TEXT, b TEXT, n INTEGER, PRIMARY KEY (a, b))
INSERT INTO pairs VALUES ('x', NULL, 1), ('x', NULL, 2), ('x', 'y', 3)
INSERT INTO pairs VALUES ('x', 'y', 4)
SELECT a, b, n FROM pairs ORDER BY n
INSERT INTO counters (name) VALUES ('ticks')
INSERT INTO short_term_memories (id, npc_id, content) VALUES ('m9', NULL, 'x')
SELECT * FROM no_such_table
SELECT no_such_column FROM npc_state
INSERT INTO npc_state (npc_id, nope) VALUES ('x', 1)
CREATE TABLE npc_state (npc_id TEXT)
SELECT 'it''s quoted', "npc_id" FROM npc_state WHERE npc_id = 'tom'
SELECT 1 + 1 AS two, 'a' AS "quoted alias", 3 three
SELECT count(*) /* inline */ FROM npc_state -- trailing comment
DROP TABLE tags
SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'tags'
DROP TABLE IF EXISTS tags
DROP TABLE tags
CREATE TABLE events_log (id INTEGER PRIMARY KEY, at TEXT DEFAULT (datetime('now')), note TEXT)
INSERT INTO events_log (note) VALUES ('boot')
SELECT id, length(at), note FROM events_log
INSERT INTO events_log (note) SELECT npc_id FROM npc_state ORDER BY npc_id
SELECT id, note FROM events_log ORDER BY id
DELETE FROM events_log
SELECT count(*) FROM events_log
INSERT INTO events_log (note) VALUES ('after delete all')
SELECT id FROM events_log
CREATE VIEW margaret_view AS SELECT id, content FROM short_term_memories WHERE npc_id = 'margaret'
SELECT id FROM margaret_view ORDER BY id
DROP VIEW margaret_view
CREATE TABLE places (name TEXT PRIMARY KEY, code INTEGER UNIQUE, owner TEXT DEFAULT 'council', visits INTEGER DEFAULT 0)
INSERT INTO places (name, code, owner, visits) VALUES ('mill', 1, 'tom', 5), ('bakery', 2, 'ada', 9), ('library', 3, 'ada', 2)
INSERT OR REPLACE INTO places (name, code) VALUES ('mill', 1)
SELECT name, code, owner, visits FROM places ORDER BY name
REPLACE INTO places (name, code, visits) VALUES ('forge', 2, 1)
SELECT name, code, owner, visits FROM places ORDER BY name
REPLACE INTO places (name, code) VALUES ('well', 10), ('well', 11), ('pond', 11)
SELECT name, code, owner FROM places ORDER BY name
INSERT OR REPLACE INTO places VALUES ('mill', 20, 'margaret', 1) RETURNING name, owner
INSERT OR REPLACE INTO places (name, code) SELECT npc_id, 100 + day FROM short_term_memories WHERE npc_id = 'margaret' ORDER BY day, hour
SELECT name, code, owner, visits FROM places ORDER BY name
INSERT OR REPLACE INTO diaries (npc_id, day) VALUES ('tom', 1)
SELECT id, npc_id, day, summary FROM diaries WHERE npc_id = 'tom' ORDER BY day
REPLACE INTO diaries (id, npc_id, day, summary) VALUES (1, 'margaret', 1, 'rewritten')
SELECT id, npc_id, day, summary FROM diaries ORDER BY id
SELECT last_insert_rowid()
INSERT OR REPLACE INTO diaries (npc_id, day, summary) VALUES ('ada', 3, 'both keys'), ('ada', 3, 'replaced again')
SELECT id, npc_id, day, summary FROM diaries WHERE npc_id = 'ada' ORDER BY id
CREATE TABLE words (w TEXT)
INSERT INTO words VALUES ('Émile'), ('émile'), ('ÉMILE'), ('Straße'), ('STRASSE'), ('Ärger'), ('ärger'), ('100%'), ('100 percent'), ('a_b'), ('axb')
SELECT w FROM words WHERE w LIKE 'émile' ORDER BY w
SELECT w FROM words WHERE w LIKE 'É%' ORDER BY w
SELECT w FROM words WHERE w LIKE '%RGER' ORDER BY w
SELECT w FROM words WHERE w NOT LIKE '%e' ORDER BY w
SELECT 'Ä' LIKE 'ä', 'A' LIKE 'a', 'ß' LIKE 'SS', 'é' LIKE '_', 'Straße' LIKE 'STRA_E'
SELECT w FROM words WHERE w LIKE '100!%' ESCAPE '!' ORDER BY w
SELECT w FROM words WHERE w LIKE 'A!_B' ESCAPE '!' ORDER BY w
SELECT w, w LIKE 'STR' || '%' AS s, CASE WHEN w LIKE '%X%' THEN 1 ELSE 0 END AS x FROM words ORDER BY w
SELECT count(*) FROM words WHERE w LIKE 'e%' OR w LIKE 'É%' AND w NOT LIKE '%E'
SELECT 12345 LIKE '123%', NULL LIKE 'a', 'a' LIKE NULL, (1 + 1) || 'x' LIKE '2X'
SELECT npc_id, count(*) FROM short_term_memories
SELECT npc_id, content, count(*) FROM short_term_memories GROUP BY npc_id
SELECT max(importance), content FROM short_term_memories
SELECT random()
CREATE TRIGGER t_ai AFTER INSERT ON npc_state BEGIN SELECT 1; END
CREATE VIRTUAL TABLE docs USING fts5(body)
CREATE TABLE untyped (a, b)
CREATE TABLE child (id INTEGER PRIMARY KEY, parent TEXT REFERENCES npc_state(npc_id) ON DELETE CASCADE)
PRAGMA foreign_keys = OFF
UPDATE OR IGNORE npc_state SET mood = 'x'
INSERT OR ROLLBACK INTO npc_state (npc_id) VALUES ('z')
CREATE INDEX idx_partial ON short_term_memories(day) WHERE importance > 0.5
UPDATE diaries SET summary = 'rewritten' WHERE id = 1
SELECT rowid, npc_id, summary FROM diaries ORDER BY rowid
SELECT id, summary FROM diaries WHERE rowid = 1
SELECT d.oid, d._rowid_, ROWID + 0 FROM diaries AS d WHERE d.rowid > 2 ORDER BY d.rowid DESC
UPDATE world_events SET kind = 'weather2', payload = 'changed' WHERE rowid = 1 RETURNING rowid, kind
SELECT rowid, kind FROM world_events ORDER BY ROWID
SELECT max(rowid), min(oid) FROM world_events
INSERT INTO world_events (rowid, day, hour, kind) VALUES (500, 9, 9, 'explicit rowid')
SELECT rowid, kind FROM world_events WHERE rowid = 2 OR rowid >= 500
DELETE FROM world_events WHERE rowid = (SELECT max(rowid) FROM world_events)
SELECT w.rowid, d.rowid FROM world_events w JOIN diaries d ON d.day = w.day ORDER BY w.rowid, d.rowid
UPDATE short_term_memories SET importance = 0.1 WHERE id = 'm1'
SELECT rowid, id FROM short_term_memories ORDER BY rowid
SELECT id FROM short_term_memories WHERE rowid = 1
SELECT s.id FROM short_term_memories s JOIN diaries d ON d.npc_id = s.npc_id ORDER BY s.rowid
-- INSERT ... SELECT * typed by its table, bare literals compared and written, literal ids (the sqllogictest work)
CREATE TABLE copies (id INTEGER PRIMARY KEY, day INTEGER, hour INTEGER, kind TEXT, payload TEXT)
CREATE TABLE copies_text (id INTEGER PRIMARY KEY, day TEXT, hour REAL, kind TEXT, payload TEXT)
INSERT INTO copies SELECT * FROM world_events ORDER BY id
INSERT INTO copies_text SELECT * FROM world_events AS w WHERE w.day > 1 ORDER BY 1 LIMIT 3
SELECT id, day, typeof(day), hour, typeof(hour), kind FROM copies_text ORDER BY id
INSERT INTO copies SELECT * FROM world_events ORDER BY id
INSERT INTO copies VALUES (2147483000, -2147483648, 2147483648, 'edge', 'it''s')
INSERT INTO copies VALUES (-5, '1', 2.0, 'neg', '')
INSERT INTO copies (day, kind) VALUES (7, 'next')
SELECT last_insert_rowid()
INSERT OR IGNORE INTO copies VALUES (-5, 9, 9, 'ignored', NULL)
INSERT INTO copies VALUES (-5, 9, 9, 'upsert', NULL) ON CONFLICT(id) DO UPDATE SET kind = excluded.kind
SELECT id, day, hour, kind, payload FROM copies WHERE day = -2147483648 OR hour IN (2147483648, 2) OR id > 2147482999 OR id < 0 ORDER BY id
SELECT id FROM copies WHERE day >= 2 AND hour < 9.5 AND 3 > day ORDER BY id
-- next ids past 2^31 - 1 (SQLite's rowids are 64-bit)
INSERT INTO copies VALUES (2147483647, 1, 1, 'top', '')
INSERT INTO copies (day, kind) VALUES (8, 'past')
INSERT INTO copies (day, kind) VALUES (9, 'a'), (10, 'b')
INSERT INTO copies (id, day, kind) VALUES (NULL, 11, 'c'), (NULL, 12, 'd')
INSERT INTO copies (id, day, kind) VALUES (NULL, 13, 'e') ON CONFLICT(id) DO NOTHING
SELECT last_insert_rowid()
SELECT id, day, kind FROM copies WHERE id > 2147483646 ORDER BY id
