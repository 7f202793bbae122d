-- Lethe local stack: objects FerretDB's database needs. Idempotent.
-- Run in the database FerretDB uses (stack/postgres/bootstrap.sh does that,
-- after creating the database), as a superuser (event triggers need one).
--
-- Why: FerretDB 1.24 sends every equality filter to PostgreSQL as
--   _jsonb -> 'field' @> '<value>'      (or _jsonb #> '{a,b}' @> ... for "a.b")
-- while the indexes it creates for MongoDB indexes are btree indexes on
--   ((_jsonb -> 'field'))                (or ((_jsonb -> 'a') -> 'b'))
-- which cannot serve @>: every lookup, even by _id, is a sequential scan.
-- The event trigger below gives each such btree key a companion GIN
-- jsonb_path_ops index on the expression the filters use. Together with
-- plan_cache_mode = force_custom_plan (FerretDB uses prepared statements whose
-- field name is a parameter) lookups use the GIN index.
-- fastupdate = off: measured at 10^5 documents, it made insertMany no slower
-- and lookups right after a bulk insert 2-3x faster (no pending list to scan).

\set ON_ERROR_STOP on

BEGIN;

-- Serialise concurrent bootstraps.
SELECT pg_advisory_xact_lock(hashtext('lethe_stack bootstrap'));

CREATE SCHEMA IF NOT EXISTS lethe_stack;
COMMENT ON SCHEMA lethe_stack IS 'Lethe local stack helpers (stack/postgres/bootstrap.sql); not a FerretDB database';

-- The JSON path of a FerretDB index key, from pg_get_indexdef(index, k, true):
--   (_jsonb -> 'f'::text)                      -> {f}
--   ((_jsonb -> 'a'::text) -> 'b'::text)       -> {a,b}
-- NULL for anything else (plain columns, other expressions).
CREATE OR REPLACE FUNCTION lethe_stack.ferretdb_key_path(expr text)
RETURNS text[]
LANGUAGE plpgsql IMMUTABLE STRICT
AS $fn$
DECLARE
  s      text := expr;
  m      text[];
  path   text[] := '{}';
  rebuilt text;
  i      int;
BEGIN
  m := regexp_match(s, '^\((.*)\)$');
  IF m IS NOT NULL THEN
    s := m[1];
  END IF;

  LOOP
    m := regexp_match(s, '^(.*) -> ''((?:[^'']|'''')*)''::text$');
    IF m IS NULL THEN
      RETURN NULL;
    END IF;
    path := replace(m[2], '''''', '''') || path;
    IF m[1] = '_jsonb' THEN
      EXIT;
    END IF;
    m := regexp_match(m[1], '^\((.*)\)$');
    IF m IS NULL THEN
      RETURN NULL;
    END IF;
    s := m[1];
  END LOOP;

  -- Guard against mis-parses: the path must render back to the same text.
  rebuilt := '_jsonb -> ' || quote_literal(path[1]) || '::text';
  FOR i IN 2 .. coalesce(array_length(path, 1), 0) LOOP
    rebuilt := '(' || rebuilt || ') -> ' || quote_literal(path[i]) || '::text';
  END LOOP;
  IF '(' || rebuilt || ')' <> expr AND rebuilt <> expr THEN
    RETURN NULL;
  END IF;

  RETURN path;
END
$fn$;

-- The GIN expression matching FerretDB's filter for a path.
CREATE OR REPLACE FUNCTION lethe_stack.gin_expression(path text[])
RETURNS text
LANGUAGE sql IMMUTABLE STRICT
AS $fn$
  SELECT CASE
    WHEN array_length(path, 1) = 1 THEN format('(_jsonb -> %L)', path[1])
    ELSE format('(_jsonb #> %L::text[])', path::text)
  END
$fn$;

-- Deterministic companion index name (<= 63 bytes, unique per table and path).
CREATE OR REPLACE FUNCTION lethe_stack.gin_index_name(schema_name text, table_name text, path text[])
RETURNS text
LANGUAGE sql IMMUTABLE STRICT
AS $fn$
  SELECT left(table_name, 28) || '_'
      || left(regexp_replace(lower(array_to_string(path, '_')), '[^a-z0-9_]', '_', 'g'), 20) || '_'
      || left(md5(schema_name || '.' || table_name || ':' || path::text), 8) || '_gin'
$fn$;

-- Adds the companion GIN indexes for one index; returns how many it created.
-- Does nothing for GIN (or other non-btree) indexes, so it does not recurse,
-- and nothing for tables without FerretDB's _jsonb column or for FerretDB's
-- own metadata table.
CREATE OR REPLACE FUNCTION lethe_stack.add_gin_companions(index_oid oid)
RETURNS int
LANGUAGE plpgsql
AS $fn$
DECLARE
  ix      record;
  k       int;
  path    text[];
  gin_name text;
  created int := 0;
BEGIN
  SELECT i.indrelid, i.indnkeyatts, am.amname, n.nspname, t.relname
    INTO ix
    FROM pg_index i
    JOIN pg_class c ON c.oid = i.indexrelid
    JOIN pg_am am ON am.oid = c.relam
    JOIN pg_class t ON t.oid = i.indrelid
    JOIN pg_namespace n ON n.oid = t.relnamespace
   WHERE i.indexrelid = index_oid;

  IF NOT FOUND OR ix.amname <> 'btree' OR ix.relname LIKE '\_ferretdb\_%' THEN
    RETURN 0;
  END IF;

  IF NOT EXISTS (
    SELECT 1 FROM pg_attribute
     WHERE attrelid = ix.indrelid AND attname = '_jsonb' AND NOT attisdropped
       AND atttypid = 'jsonb'::regtype
  ) THEN
    RETURN 0;
  END IF;

  FOR k IN 1 .. ix.indnkeyatts LOOP
    path := lethe_stack.ferretdb_key_path(pg_get_indexdef(index_oid, k, true));
    CONTINUE WHEN path IS NULL;

    gin_name := lethe_stack.gin_index_name(ix.nspname, ix.relname, path);
    CONTINUE WHEN to_regclass(format('%I.%I', ix.nspname, gin_name)) IS NOT NULL;

    EXECUTE format(
      'CREATE INDEX IF NOT EXISTS %I ON %I.%I USING gin (%s jsonb_path_ops) WITH (fastupdate = off)',
      gin_name, ix.nspname, ix.relname, lethe_stack.gin_expression(path)
    );
    EXECUTE format(
      'COMMENT ON INDEX %I.%I IS %L',
      ix.nspname, gin_name, 'lethe-gin-companion ' || path::text
    );
    PERFORM lethe_stack.no_value_statistics(format('%I.%I', ix.nspname, gin_name)::regclass);
    created := created + 1;
  END LOOP;

  RETURN created;
END
$fn$;

-- Adds missing companions for every existing index (collections created
-- before the trigger existed). Returns how many it created.
CREATE OR REPLACE FUNCTION lethe_stack.add_all_gin_companions()
RETURNS int
LANGUAGE plpgsql
AS $fn$
DECLARE
  r record;
  total int := 0;
BEGIN
  FOR r IN
    SELECT i.indexrelid
      FROM pg_index i
      JOIN pg_class c ON c.oid = i.indexrelid
      JOIN pg_am am ON am.oid = c.relam
      JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE am.amname = 'btree'
       AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast', 'lethe_stack')
  LOOP
    total := total + lethe_stack.add_gin_companions(r.indexrelid);
  END LOOP;
  RETURN total;
END
$fn$;

-- Drops companions that no remaining btree index of their table needs
-- (after FerretDB's dropIndexes). Returns how many it dropped.
CREATE OR REPLACE FUNCTION lethe_stack.drop_orphan_gin_companions(only_schemas text[] DEFAULT NULL)
RETURNS int
LANGUAGE plpgsql
AS $fn$
DECLARE
  g record;
  dropped int := 0;
BEGIN
  FOR g IN
    SELECT n.nspname, c.relname, i.indrelid,
           substr(d.description, length('lethe-gin-companion ') + 1)::text[] AS path
      FROM pg_index i
      JOIN pg_class c ON c.oid = i.indexrelid
      JOIN pg_namespace n ON n.oid = c.relnamespace
      JOIN pg_description d ON d.objoid = c.oid AND d.classoid = 'pg_class'::regclass AND d.objsubid = 0
     WHERE d.description LIKE 'lethe-gin-companion %'
       AND (only_schemas IS NULL OR n.nspname = ANY (only_schemas))
  LOOP
    CONTINUE WHEN EXISTS (
      SELECT 1
        FROM pg_index b
        JOIN pg_class bc ON bc.oid = b.indexrelid
        JOIN pg_am am ON am.oid = bc.relam
        CROSS JOIN LATERAL generate_series(1, b.indnkeyatts) AS k
       WHERE b.indrelid = g.indrelid
         AND am.amname = 'btree'
         AND lethe_stack.ferretdb_key_path(pg_get_indexdef(b.indexrelid, k, true)) = g.path
    );
    EXECUTE format('DROP INDEX IF EXISTS %I.%I', g.nspname, g.relname);
    dropped := dropped + 1;
  END LOOP;
  RETURN dropped;
END
$fn$;

CREATE OR REPLACE FUNCTION lethe_stack.on_create_index()
RETURNS event_trigger
LANGUAGE plpgsql
AS $fn$
DECLARE
  cmd record;
BEGIN
  FOR cmd IN
    SELECT objid, object_identity
      FROM pg_event_trigger_ddl_commands()
     WHERE command_tag = 'CREATE INDEX' AND object_type = 'index'
  LOOP
    BEGIN
      PERFORM lethe_stack.add_gin_companions(cmd.objid);
    EXCEPTION WHEN OTHERS THEN
      -- Never make FerretDB's own CREATE INDEX fail because of us.
      RAISE WARNING 'lethe_stack: no GIN companion for index %: %', cmd.object_identity, SQLERRM;
    END;
  END LOOP;
END
$fn$;

CREATE OR REPLACE FUNCTION lethe_stack.on_drop_index()
RETURNS event_trigger
LANGUAGE plpgsql
AS $fn$
DECLARE
  schemas text[];
BEGIN
  SELECT array_agg(DISTINCT schema_name) INTO schemas
    FROM pg_event_trigger_dropped_objects()
   WHERE object_type = 'index' AND schema_name IS NOT NULL;
  -- Our own DROP INDEX of a companion fires this trigger again: skip that.
  IF schemas IS NULL OR current_setting('lethe_stack.gc_running', true) = 'on' THEN
    RETURN;
  END IF;
  PERFORM set_config('lethe_stack.gc_running', 'on', true);
  BEGIN
    PERFORM lethe_stack.drop_orphan_gin_companions(schemas);
  EXCEPTION WHEN OTHERS THEN
    RAISE WARNING 'lethe_stack: could not drop orphan GIN companions: %', SQLERRM;
  END;
  PERFORM set_config('lethe_stack.gc_running', 'off', true);
END
$fn$;

DROP EVENT TRIGGER IF EXISTS lethe_gin_companions;
CREATE EVENT TRIGGER lethe_gin_companions ON ddl_command_end
  WHEN TAG IN ('CREATE INDEX')
  EXECUTE FUNCTION lethe_stack.on_create_index();

DROP EVENT TRIGGER IF EXISTS lethe_gin_companions_gc;
CREATE EVENT TRIGGER lethe_gin_companions_gc ON sql_drop
  WHEN TAG IN ('DROP INDEX')
  EXECUTE FUNCTION lethe_stack.on_drop_index();

-- No planner statistics on document values. ANALYZE samples rows into
-- pg_statistic: most common values and histogram bounds of the _jsonb column
-- and of every expression index column (a subject id array, a selector, a
-- whole document). Those copies outlive an erasure: the live ones until the
-- next ANALYZE of the table, and each replaced version as a dead tuple in
-- pg_statistic's own file. Lookups go through the GIN companions (whose
-- default selectivity already favours them), so the planner loses nothing it
-- uses; what it would lose is a copy of erased data outside the tables an
-- erasure compacts.
CREATE OR REPLACE FUNCTION lethe_stack.no_value_statistics(rel oid)
RETURNS int
LANGUAGE plpgsql
AS $fn$
DECLARE
  r record;
  k int;
  changed int := 0;
BEGIN
  SELECT c.relkind, n.nspname, c.relname INTO r
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE c.oid = rel;
  IF NOT FOUND OR r.nspname IN ('pg_catalog', 'information_schema', 'pg_toast', 'lethe_stack') THEN
    RETURN 0;
  END IF;
  IF r.relkind = 'r' AND EXISTS (
    SELECT 1 FROM pg_attribute
     WHERE attrelid = rel AND attname = '_jsonb' AND NOT attisdropped AND attstattarget <> 0
  ) THEN
    EXECUTE format('ALTER TABLE %I.%I ALTER COLUMN _jsonb SET STATISTICS 0', r.nspname, r.relname);
    changed := changed + 1;
  ELSIF r.relkind = 'i' THEN
    FOR k IN
      SELECT a.attnum FROM pg_attribute a JOIN pg_index i ON i.indexrelid = a.attrelid
       WHERE a.attrelid = rel AND a.attnum > 0 AND i.indkey[a.attnum - 1] = 0 AND a.attstattarget <> 0
    LOOP
      EXECUTE format('ALTER INDEX %I.%I ALTER COLUMN %s SET STATISTICS 0', r.nspname, r.relname, k);
      changed := changed + 1;
    END LOOP;
  END IF;
  RETURN changed;
END
$fn$;

CREATE OR REPLACE FUNCTION lethe_stack.on_create_relation()
RETURNS event_trigger
LANGUAGE plpgsql
AS $fn$
DECLARE
  cmd record;
BEGIN
  FOR cmd IN
    SELECT objid, object_identity
      FROM pg_event_trigger_ddl_commands()
     WHERE command_tag IN ('CREATE TABLE', 'CREATE INDEX') AND object_type IN ('table', 'index')
  LOOP
    BEGIN
      PERFORM lethe_stack.no_value_statistics(cmd.objid);
    EXCEPTION WHEN OTHERS THEN
      RAISE WARNING 'lethe_stack: statistics left on %: %', cmd.object_identity, SQLERRM;
    END;
  END LOOP;
END
$fn$;

DROP EVENT TRIGGER IF EXISTS lethe_no_value_statistics;
CREATE EVENT TRIGGER lethe_no_value_statistics ON ddl_command_end
  WHEN TAG IN ('CREATE TABLE', 'CREATE INDEX')
  EXECUTE FUNCTION lethe_stack.on_create_relation();

-- Relations created before this trigger existed, and the statistics ANALYZE
-- already took of them (bootstrap.sh then rewrites pg_statistic's file).
SELECT coalesce(sum(lethe_stack.no_value_statistics(c.oid)), 0) AS value_statistics_disabled
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE c.relkind IN ('r', 'i')
   AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast', 'lethe_stack');
DELETE FROM pg_statistic s
 USING pg_class c, pg_namespace n
 WHERE c.oid = s.starelid AND n.oid = c.relnamespace
   AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast', 'lethe_stack');

SELECT lethe_stack.add_all_gin_companions() AS gin_companions_backfilled;

COMMIT;
