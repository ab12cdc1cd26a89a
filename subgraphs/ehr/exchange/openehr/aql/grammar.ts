/**
 * openEHR AQL 1.1 as a peggy grammar, written after the specifications-QUERY
 * ANTLR grammar (AqlParser.g4/AqlLexer.g4): keywords are case-insensitive,
 * `--` starts a comment. CONTAINS binds tighter than AND/OR in FROM
 * (`a CONTAINS b AND c` is `(a CONTAINS b) AND c`), so a containment with
 * several classes inside one is written in parentheses, as the spec's
 * examples do. Template ids (`COMPOSITION c[vital_signs.v1]`) are accepted
 * as a CareGraph extension of the archetype predicate.
 *
 * The actions build the AST typed in ./parser.ts.
 */
export const AQL_GRAMMAR = String.raw`
{{
  const fold = (head, tail, kind) => tail.reduce((left, right) => ({ kind, left, right }), head);
  const RESERVED = new Set(['SELECT', 'FROM', 'WHERE', 'ORDER', 'BY', 'LIMIT', 'OFFSET', 'CONTAINS', 'AND', 'OR', 'NOT', 'AS',
    'DISTINCT', 'TOP', 'EXISTS', 'LIKE', 'MATCHES', 'ASC', 'DESC', 'ASCENDING', 'DESCENDING', 'TRUE', 'FALSE', 'NULL', 'XOR']);
}}

Query
  = _ select:SelectClause _ from:FromClause where:(_ @WhereClause)? orderBy:(_ @OrderByClause)? limit:(_ @LimitClause)? _ !.
    { return { ...select, from, where: where ?? undefined, orderBy: orderBy ?? [], ...(limit ?? {}) }; }

// ---- SELECT ----------------------------------------------------------------

SelectClause
  = SELECT _ distinct:(DISTINCT _)? top:(@Top _)? head:SelectExpr tail:(_ "," _ @SelectExpr)*
    { return { distinct: distinct !== null, top: top ?? undefined, select: [head, ...tail] }; }

Top
  = TOP _ count:Integer direction:(_ @(FORWARD / BACKWARD))?
    { return { count, direction: direction ? direction.toUpperCase() : 'FORWARD' }; }

SelectExpr
  = expr:ColumnExpr alias:(_ AS _ @Alias)?
    { return { expr: expr.expr, text: expr.text, alias: alias ?? undefined }; }

ColumnExpr
  = expr:(AggregateCall / FunctionCall / IdentifiedPath / Primitive) { return { expr, text: text() }; }

AggregateCall
  = COUNT _ "(" _ "*" _ ")" { return { kind: 'aggregate', fn: 'COUNT', distinct: false, text: text() }; }
  / COUNT _ "(" _ distinct:(DISTINCT _)? path:IdentifiedPath _ ")" { return { kind: 'aggregate', fn: 'COUNT', distinct: distinct !== null, path, text: text() }; }
  / fn:(MIN / MAX / SUM / AVG) _ "(" _ path:IdentifiedPath _ ")" { return { kind: 'aggregate', fn: fn.toUpperCase(), distinct: false, path, text: text() }; }

FunctionCall
  = TERMINOLOGY _ "(" _ String _ "," _ String _ "," _ String _ ")" { return { kind: 'call', name: 'TERMINOLOGY', args: [], text: text() }; }
  / name:FunctionName _ "(" _ args:(head:Terminal tail:(_ "," _ @Terminal)* { return [head, ...tail]; })? _ ")"
    { return { kind: 'call', name: name.toUpperCase(), args: args ?? [], text: text() }; }

FunctionName = $([a-zA-Z] [a-zA-Z0-9_]*)

// ---- FROM ------------------------------------------------------------------

FromClause = FROM _ @ContainsExpr

ContainsExpr = head:ContainsAnd tail:(_ OR _ @ContainsAnd)* { return fold(head, tail, 'or'); }

ContainsAnd = head:ContainsUnit tail:(_ AND _ @ContainsUnit)* { return fold(head, tail, 'and'); }

ContainsUnit
  = "(" _ @ContainsExpr _ ")"
  / ClassContains

ClassContains
  = cls:ClassExpr inner:(_ not:(NOT _)? CONTAINS _ expr:ContainsUnit { return { not: not !== null, expr }; })?
    { return inner ? { ...cls, contains: inner } : cls; }

ClassExpr
  = VERSION variable:(_ @Variable)? predicate:(_ "[" _ @VersionPredicate _ "]")?
    { return { kind: 'class', rmClass: 'VERSION', variable: variable ?? undefined, version: predicate ?? undefined, location: location() }; }
  / rmClass:ClassName variable:(_ @Variable)? predicate:(_ @PathPredicate)?
    { return { kind: 'class', rmClass, variable: variable ?? undefined, predicate: predicate ?? undefined, location: location() }; }

ClassName = $([A-Z] [A-Z0-9_]* !IdentChar)

VersionPredicate
  = LATEST_VERSION { return { kind: 'latest' }; }
  / ALL_VERSIONS { return { kind: 'all' }; }
  / StandardPredicate

// ---- WHERE -----------------------------------------------------------------

WhereClause = WHERE _ @WhereOr

WhereOr = head:WhereAnd tail:(_ OR _ @WhereAnd)* { return fold(head, tail, 'or'); }

WhereAnd = head:WhereNot tail:(_ AND _ @WhereNot)* { return fold(head, tail, 'and'); }

WhereNot
  = NOT _ expr:WhereNot { return { kind: 'not', expr }; }
  / "(" _ @WhereOr _ ")"
  / IdentifiedExpr

IdentifiedExpr
  = EXISTS _ path:IdentifiedPath { return { kind: 'exists', path }; }
  / path:IdentifiedPath _ LIKE _ pattern:(String / Parameter) { return { kind: 'like', path, pattern: typeof pattern === 'string' ? { kind: 'literal', value: pattern } : pattern }; }
  / path:IdentifiedPath _ MATCHES _ values:MatchesOperand { return { kind: 'matches', path, values }; }
  / left:Terminal _ op:ComparisonOperator _ right:Terminal { return { kind: 'compare', op, left, right }; }

MatchesOperand
  = "{" _ head:ValueListItem tail:(_ "," _ @ValueListItem)* _ "}" { return [head, ...tail]; }
  / fn:FunctionCall { return [fn]; }

ValueListItem = Primitive / Parameter / FunctionCall

Terminal = Primitive / Parameter / FunctionCall / IdentifiedPath

// ---- ORDER BY, LIMIT -------------------------------------------------------

OrderByClause = ORDER _ BY _ head:OrderByExpr tail:(_ "," _ @OrderByExpr)* { return [head, ...tail]; }

OrderByExpr
  = path:IdentifiedPath direction:(_ @(DESCENDING / DESC / ASCENDING / ASC))?
    { return { path, descending: direction !== null && direction.toUpperCase().startsWith('DESC') }; }

LimitClause
  = LIMIT _ limit:Integer offset:(_ OFFSET _ @Integer)? { return { limit, offset: offset ?? undefined }; }

// ---- paths and predicates --------------------------------------------------

IdentifiedPath
  = variable:Variable predicate:PathPredicate? parts:("/" @ObjectPath)?
    { return { kind: 'path', variable, predicate: predicate ?? undefined, parts: parts ?? [], text: text() }; }

ObjectPath = head:PathPart tail:("/" @PathPart)* { return [head, ...tail]; }

PathPart = name:Name predicate:PathPredicate? { return { name, predicate: predicate ?? undefined }; }

PathPredicate = "[" _ @NodePredicateOr _ "]"

NodePredicateOr = head:NodePredicateAnd tail:(_ OR _ @NodePredicateAnd)* { return fold(head, tail, 'or'); }

NodePredicateAnd = head:NodePredicate tail:(_ AND _ @NodePredicate)* { return fold(head, tail, 'and'); }

NodePredicate
  = id:(AtCode / IdCode / ArchetypeId / TemplateId) name:(_ "," _ @NameValue)?
    { return { kind: 'node', id, name: name ?? undefined }; }
  / StandardPredicate
  / param:Parameter name:(_ "," _ @NameValue)? { return { kind: 'node', id: param, name: name ?? undefined }; }

NameValue
  = value:String { return { kind: 'literal', value }; }
  / Parameter
  / code:(TermCode / AtCode / IdCode) { return { kind: 'literal', value: code }; }

StandardPredicate
  = path:ObjectPath _ op:ComparisonOperator _ value:PredicateOperand { return { kind: 'compare', path, op, value }; }

PredicateOperand
  = Primitive
  / Parameter
  / code:(AtCode / IdCode) { return { kind: 'literal', value: code }; }

AtCode = $("at" [0-9]+ ("." [0-9]+)* !IdentChar)
IdCode = $("id" [0-9]+ ("." [0-9]+)* !IdentChar)
ArchetypeId = $((Label ("." Label)* "::")? Ident "-" Ident "-" Ident "." [a-zA-Z] [a-zA-Z0-9_-]* ".v" [0-9]+ ("." [0-9]+)* ("-" ("rc" / "alpha") ("." [0-9]+)?)?)
TemplateId = $([a-zA-Z] [a-zA-Z0-9_-]* ("." !("v" [0-9]+ !IdentChar) [a-zA-Z0-9_-]+)* ".v" [0-9]+ !IdentChar)
TermCode = $([a-zA-Z0-9_.-]+ "::" [a-zA-Z0-9_.-]+)
Label = [a-zA-Z] [a-zA-Z0-9_-]*
Ident = [a-zA-Z] [a-zA-Z0-9_]*

// ---- terminals -------------------------------------------------------------

Primitive
  = value:(String / Number) { return { kind: 'literal', value }; }
  / TRUE { return { kind: 'literal', value: true }; }
  / FALSE { return { kind: 'literal', value: false }; }
  / NULL { return { kind: 'literal', value: null }; }

Parameter = "$" name:$([a-zA-Z] [a-zA-Z0-9_]*) { return { kind: 'param', name }; }

String
  = "'" chars:(@$[^'\\]+ / "\\" @Escape)* "'" { return chars.join(''); }
  / '"' chars:(@$[^"\\]+ / "\\" @Escape)* '"' { return chars.join(''); }

Escape
  = "n" { return '\n'; }
  / "t" { return '\t'; }
  / "r" { return '\r'; }
  / "u" hex:$([0-9a-fA-F]|4|) { return String.fromCharCode(parseInt(hex, 16)); }
  / .

Number = ("-" _)? ([0-9]+ ("." [0-9]+)? / "." [0-9]+) ([eE] [-+]? [0-9]+)? !IdentChar { return Number(text().replace(/\s/g, '')); }

Integer "a whole number" = digits:$[0-9]|1..7| !IdentChar { return Number(digits); }

ComparisonOperator = "<=" / ">=" / "!=" / "<>" { return '!='; } / "=" / "<" / ">"

Variable "a variable"
  = name:$(Ident) !{ return RESERVED.has(name.toUpperCase()); } { return name; }

Alias "an alias"
  = name:$(Ident) !{ return RESERVED.has(name.toUpperCase()); } { return name; }

Name "a path attribute" = $([a-zA-Z_] [a-zA-Z0-9_]*)

IdentChar = [a-zA-Z0-9_]

// ---- keywords (case-insensitive, whole words) ------------------------------

SELECT = @$"select"i !IdentChar
FROM = @$"from"i !IdentChar
WHERE = @$"where"i !IdentChar
ORDER = @$"order"i !IdentChar
BY = @$"by"i !IdentChar
LIMIT = @$"limit"i !IdentChar
OFFSET = @$"offset"i !IdentChar
DISTINCT = @$"distinct"i !IdentChar
TOP = @$"top"i !IdentChar
FORWARD = @$"forward"i !IdentChar
BACKWARD = @$"backward"i !IdentChar
AS = @$"as"i !IdentChar
CONTAINS = @$"contains"i !IdentChar
AND = @$"and"i !IdentChar
OR = @$"or"i !IdentChar
NOT = @$"not"i !IdentChar
EXISTS = @$"exists"i !IdentChar
LIKE = @$"like"i !IdentChar
MATCHES = @$"matches"i !IdentChar
VERSION = @$"version"i !IdentChar
LATEST_VERSION = @$"latest_version"i !IdentChar
ALL_VERSIONS = @$"all_versions"i !IdentChar
ASC = @$"asc"i !IdentChar
ASCENDING = @$"ascending"i !IdentChar
DESC = @$"desc"i !IdentChar
DESCENDING = @$"descending"i !IdentChar
COUNT = @$"count"i !IdentChar
MIN = @$"min"i !IdentChar
MAX = @$"max"i !IdentChar
SUM = @$"sum"i !IdentChar
AVG = @$"avg"i !IdentChar
TERMINOLOGY = @$"terminology"i !IdentChar
TRUE = @$"true"i !IdentChar
FALSE = @$"false"i !IdentChar
NULL = @$"null"i !IdentChar

_ "whitespace" = ([ \t\r\n] / Comment)*

Comment = "--" [^\r\n]*
`;
