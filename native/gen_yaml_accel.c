/*
 * gen_yaml_accel: the loader's fast path in C, for the simple documents that nearly every
 * policy and rendered manifest is (mappings, sequences, untagged scalars, unique string keys).
 *
 * simple_documents mirrors generator.load._simple_documents exactly and, like it, only ever
 * accepts: for anything else (anchors, aliases, tags, merge keys, duplicate or non-string keys,
 * too many nodes or levels, a syntax error) it returns None and gen's own builder reads the text
 * again, decides and reports. It first tries the block reader below, which reads the commonest
 * layout without libyaml, and gives the text to libyaml's parser when the reader steps aside.
 * Plain scalars whose first character could start a non-string (YAML 1.1's implicit resolvers
 * are keyed by first character) are resolved by the Python callback gen registers, so types
 * follow the same code on every path.
 *
 * block_yaml and flow_yaml are the writing side: generator.serialize's block lines and the
 * flow values templates write, built in one buffer. Scalars are spelled by gen (its tables of
 * spellings met so far, then its callbacks), so the C side decides only layout, never how a
 * value is quoted.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>
#include <yaml.h>

static PyObject *resolve_plain = NULL; /* value -> constructed value, or `unusual` */
static PyObject *unusual = NULL;       /* the callback's "leave it to the builder" answer */
static char resolver_chars[256];       /* first bytes that need the callback */
static Py_ssize_t max_nodes = 0;
static Py_ssize_t max_depth = 0; /* open containers at most */

typedef struct {
    char *data;
    Py_ssize_t size, capacity;
} Buffer;

/* Returns 0, or -1 with MemoryError set. */
static int buffer_reserve(Buffer *buffer, Py_ssize_t extra) {
    if (buffer->size + extra <= buffer->capacity)
        return 0;
    Py_ssize_t capacity = buffer->capacity ? buffer->capacity : 4096;
    while (capacity < buffer->size + extra)
        capacity *= 2;
    char *data = PyMem_Realloc(buffer->data, (size_t)capacity);
    if (data == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    buffer->data = data;
    buffer->capacity = capacity;
    return 0;
}

static int buffer_put(Buffer *buffer, const char *text, Py_ssize_t length) {
    if (length == 0)
        return 0; /* and no memcpy to a buffer not yet allocated */
    if (buffer_reserve(buffer, length) < 0)
        return -1;
    memcpy(buffer->data + buffer->size, text, (size_t)length);
    buffer->size += length;
    return 0;
}

/* The buffer's text as a str if status is 0 (else NULL, the exception set); frees the buffer. */
static PyObject *buffer_text(Buffer *buffer, int status) {
    PyObject *text = status == 0 ? PyUnicode_DecodeUTF8(buffer->data, buffer->size, "strict") : NULL;
    PyMem_Free(buffer->data);
    return text;
}

typedef struct {
    PyObject *value; /* dict or list (owned); a finished document root is kept here too */
    PyObject *key;   /* mapping: the key whose value comes next (owned), or NULL */
} Frame;

typedef struct {
    Frame *frames;
    Py_ssize_t size, capacity;
} Stack;

static void stack_clear(Stack *stack) {
    for (Py_ssize_t i = 0; i < stack->size; i++) {
        Py_XDECREF(stack->frames[i].value);
        Py_XDECREF(stack->frames[i].key);
    }
    stack->size = 0;
}

/* Takes ownership of value. Returns 0, or -1 with an exception set. */
static int stack_push(Stack *stack, PyObject *value) {
    if (stack->size == stack->capacity) {
        Py_ssize_t capacity = stack->capacity ? stack->capacity * 2 : 16;
        Frame *frames = PyMem_Realloc(stack->frames, capacity * sizeof(Frame));
        if (frames == NULL) {
            Py_DECREF(value);
            PyErr_NoMemory();
            return -1;
        }
        stack->frames = frames;
        stack->capacity = capacity;
    }
    stack->frames[stack->size].value = value;
    stack->frames[stack->size].key = NULL;
    stack->size++;
    return 0;
}

enum { PLACED = 0, FAILED = -1, UNUSUAL = -2 };

/* Put value (owned) where the document is: its root, a list item, a key, or a key's value. */
static int place(Stack *stack, PyObject *value) {
    if (stack->size == 0)
        return stack_push(stack, value) == 0 ? PLACED : FAILED;
    Frame *top = &stack->frames[stack->size - 1];
    if (PyList_CheckExact(top->value)) {
        int err = PyList_Append(top->value, value);
        Py_DECREF(value);
        return err == 0 ? PLACED : FAILED;
    }
    if (top->key == NULL) {
        if (!PyUnicode_CheckExact(value)) {
            Py_DECREF(value);
            return UNUSUAL;
        }
        int present = PyDict_Contains(top->value, value);
        if (present != 0) {
            Py_DECREF(value);
            return present < 0 ? FAILED : UNUSUAL;
        }
        top->key = value;
        return PLACED;
    }
    int err = PyDict_SetItem(top->value, top->key, value);
    Py_DECREF(value);
    Py_CLEAR(top->key);
    return err == 0 ? PLACED : FAILED;
}

/* A scalar's value as the builder constructs it: a new reference, unusual (borrowed, not
 * counted), or NULL with an exception set. Only plain scalars resolve to other types. */
static PyObject *resolved_scalar(const char *text, Py_ssize_t length, int plain) {
    PyObject *value = PyUnicode_DecodeUTF8(text, length, "strict");
    if (value == NULL || !plain)
        return value;
    if (length > 0 && !resolver_chars[(unsigned char)text[0]])
        return value; /* no implicit resolver starts with this character: a string */
    PyObject *resolved = PyObject_CallOneArg(resolve_plain, value);
    Py_DECREF(value);
    if (resolved == unusual) {
        Py_DECREF(resolved);
        return unusual;
    }
    return resolved;
}

/*
 * The block reader: what templates write and people hand-edit nearly always is one document of
 * block mappings and sequences, with one plain, quoted or single-line flow scalar per line. It
 * reads that without libyaml, several times as fast, and steps aside (UNUSUAL) for everything
 * else: tabs, carriage returns and non-ASCII bytes, multi-line scalars, several documents,
 * anchors, aliases, tags, complex keys, and any indicator it does not expect where it is. libyaml
 * then reads the text as before, so a text it accepts must give libyaml's values (tests hold it
 * to that on generated and mutated text).
 */
typedef struct {
    Py_ssize_t start, end, indent; /* first non-space character, the line break, spaces before start */
} Line;

typedef struct {
    const char *text;
    Line *lines; /* content lines only: no blank or comment lines */
    Py_ssize_t count, at;
    Py_ssize_t nodes, depth;
    int status; /* why reading stopped: FAILED (exception set) or UNUSUAL */
} Reader;

/* libyaml's limit on a simple key: from its first character to its colon. */
#define MAX_SIMPLE_KEY 1024

static PyObject *halt(Reader *reader, int status) {
    reader->status = status;
    return NULL;
}

static int is_indicator(char c) {
    return strchr("-?:,[]{}#&*!|>'\"%@`", c) != NULL;
}

static Py_ssize_t skip_spaces(const char *text, Py_ssize_t at, Py_ssize_t end) {
    while (at < end && text[at] == ' ')
        at++;
    return at;
}

/* "-" alone or "- ...": a block sequence item. */
static int is_item(const Reader *reader, const Line *line) {
    const char *text = reader->text;
    return text[line->start] == '-' && (line->start + 1 == line->end || text[line->start + 1] == ' ');
}

/* Lines of printable ASCII (no tab or carriage return), one document: PLACED or UNUSUAL. */
static int split_lines(Reader *reader, const char *text, Py_ssize_t size) {
    Py_ssize_t breaks = 0;
    for (Py_ssize_t i = 0; i < size; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c == '\n')
            breaks++;
        else if (c < 0x20 || c > 0x7e)
            return UNUSUAL;
    }
    reader->lines = PyMem_Malloc((size_t)(breaks + 1) * sizeof(Line));
    if (reader->lines == NULL) {
        PyErr_NoMemory();
        return FAILED;
    }
    int started = 0; /* a "---" line seen */
    for (Py_ssize_t begin = 0; begin < size;) {
        const char *found = memchr(text + begin, '\n', (size_t)(size - begin));
        Py_ssize_t end = found ? found - text : size;
        Py_ssize_t start = skip_spaces(text, begin, end);
        if (start < end && text[start] != '#') {
            int marker = start == begin && end - start >= 3 &&
                         (strncmp(text + start, "---", 3) == 0 || strncmp(text + start, "...", 3) == 0) &&
                         (end - start == 3 || text[start + 3] == ' ');
            if (marker) { /* only one document start, before any content, with nothing after it */
                if (started || reader->count > 0 || text[start] == '.' || skip_spaces(text, start + 3, end) != end)
                    return UNUSUAL;
                started = 1;
            } else {
                reader->lines[reader->count++] = (Line){start, end, start - begin};
            }
        }
        begin = end + 1;
    }
    return PLACED;
}

/* A new mapping or sequence as a container opens (one more node and one more level), or NULL
 * with the reader's status set. */
static PyObject *open_container(Reader *reader, int mapping) {
    if (++reader->nodes > max_nodes || ++reader->depth > max_depth)
        return halt(reader, UNUSUAL);
    PyObject *container = mapping ? PyDict_New() : PyList_New(0);
    return container != NULL ? container : halt(reader, FAILED);
}

/* The container's end: one level less, and the container; or, when reading it failed, NULL
 * with the container released. */
static PyObject *close_container(Reader *reader, PyObject *container, int failed) {
    if (failed) {
        Py_DECREF(container);
        return NULL;
    }
    reader->depth--;
    return container;
}

/* Append item (owned) to a sequence: 0, or -1 with the reader's status set. */
static int append_item(Reader *reader, PyObject *sequence, PyObject *item) {
    int status = PyList_Append(sequence, item);
    Py_DECREF(item);
    if (status < 0)
        reader->status = FAILED;
    return status;
}

static PyObject *read_scalar(Reader *reader, const char *text, Py_ssize_t length, int plain) {
    if (++reader->nodes > max_nodes)
        return halt(reader, UNUSUAL);
    PyObject *value = resolved_scalar(text, length, plain);
    if (value == NULL)
        return halt(reader, FAILED);
    if (value == unusual)
        return halt(reader, UNUSUAL);
    return value;
}

static int put_code_point(Buffer *buffer, unsigned long code) {
    char bytes[4];
    Py_ssize_t length;
    if (code < 0x80) {
        bytes[0] = (char)code;
        length = 1;
    } else if (code < 0x800) {
        bytes[0] = (char)(0xc0 | (code >> 6));
        bytes[1] = (char)(0x80 | (code & 0x3f));
        length = 2;
    } else if (code < 0x10000) {
        bytes[0] = (char)(0xe0 | (code >> 12));
        bytes[1] = (char)(0x80 | ((code >> 6) & 0x3f));
        bytes[2] = (char)(0x80 | (code & 0x3f));
        length = 3;
    } else {
        bytes[0] = (char)(0xf0 | (code >> 18));
        bytes[1] = (char)(0x80 | ((code >> 12) & 0x3f));
        bytes[2] = (char)(0x80 | ((code >> 6) & 0x3f));
        bytes[3] = (char)(0x80 | (code & 0x3f));
        length = 4;
    }
    return buffer_put(buffer, bytes, length);
}

/* The escapes libyaml has always read in double quotes; a line break after the backslash
 * (a continued line) and anything newer are left to it. Returns the code point, or -1. */
static long escaped(const char *text, Py_ssize_t *at, Py_ssize_t end) {
    static const char simple[] = "0\0a\ab\bt\tn\nv\vf\fr\re\x1b  \"\"\\\\N\x85_\xa0";
    char c = text[*at];
    int digits = c == 'x' ? 2 : c == 'u' ? 4 : c == 'U' ? 8 : 0;
    if (digits == 0) {
        (*at)++;
        if (c == 'L')
            return 0x2028;
        if (c == 'P')
            return 0x2029;
        for (size_t i = 0; i + 1 < sizeof(simple); i += 2)
            if (simple[i] == c)
                return (long)(unsigned char)simple[i + 1];
        return -1;
    }
    if (end - *at - 1 < digits)
        return -1;
    unsigned long code = 0;
    for (int i = 1; i <= digits; i++) {
        char h = text[*at + i];
        int v = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
        if (v < 0)
            return -1;
        code = code * 16 + (unsigned long)v;
    }
    *at += digits + 1;
    if ((code >= 0xd800 && code <= 0xdfff) || code > 0x10ffff)
        return -1; /* libyaml refuses these */
    return (long)code;
}

/* Where the quoted scalar starting at `at` closes on its line, or -1. */
static Py_ssize_t closing_quote(const char *text, Py_ssize_t at, Py_ssize_t end) {
    char quote = text[at];
    for (Py_ssize_t i = at + 1; i < end; i++) {
        if (quote == '"' && text[i] == '\\')
            i++;
        else if (text[i] == quote && !(quote == '\'' && i + 1 < end && text[i + 1] == '\''))
            return i;
        else if (text[i] == quote)
            i++; /* '' in single quotes */
    }
    return -1;
}

/* A single- or double-quoted scalar that closes on its line; *next is just past its quote. */
static PyObject *read_quoted(Reader *reader, Py_ssize_t at, Py_ssize_t end, Py_ssize_t *next) {
    const char *text = reader->text;
    char quote = text[at], special = quote == '"' ? '\\' : '\'';
    Buffer buffer = {NULL, 0, 0};
    Py_ssize_t i = at + 1;
    int status = UNUSUAL;
    PyObject *value = NULL;
    while (i < end) {
        Py_ssize_t run = i;
        while (i < end && text[i] != quote && text[i] != special)
            i++;
        if (i == end)
            break; /* the scalar goes on below: libyaml folds its lines */
        int closes = quote == '"' ? text[i] == '"' : !(i + 1 < end && text[i + 1] == '\'');
        if (closes && buffer.data == NULL) { /* nothing escaped: the text itself */
            *next = i + 1;
            return read_scalar(reader, text + run, i - run, 0);
        }
        if (buffer_put(&buffer, text + run, i - run) < 0) {
            status = FAILED;
            break;
        }
        if (closes) {
            *next = i + 1;
            value = read_scalar(reader, buffer.data, buffer.size, 0);
            status = PLACED;
            break;
        }
        long code = '\'';
        if (quote == '\'')
            i += 2;
        else if (++i == end || (code = escaped(text, &i, end)) < 0)
            break;
        if (put_code_point(&buffer, (unsigned long)code) < 0) {
            status = FAILED;
            break;
        }
    }
    PyMem_Free(buffer.data);
    if (status != PLACED)
        reader->status = status;
    return value;
}

/* A plain scalar inside a flow collection: it stops at a comma, a bracket or a colon. */
static PyObject *read_flow_plain(Reader *reader, Py_ssize_t at, Py_ssize_t end, Py_ssize_t *next) {
    const char *text = reader->text;
    char first = text[at];
    if (is_indicator(first) && !(first == '-' && at + 1 < end && (Py_ISALNUM(text[at + 1]) || text[at + 1] == '.')))
        return halt(reader, UNUSUAL);
    Py_ssize_t i = at;
    while (i < end && !strchr(",[]{}:#'\"", text[i]))
        i++;
    if (i == end || strchr("[{#'\"", text[i]))
        return halt(reader, UNUSUAL); /* unclosed, nested in a scalar, a comment or a quote */
    Py_ssize_t last = i;
    while (last > at && text[last - 1] == ' ')
        last--;
    *next = i;
    return read_scalar(reader, text + at, last - at, 1);
}

static PyObject *read_flow(Reader *reader, Py_ssize_t at, Py_ssize_t end, Py_ssize_t *next);

static PyObject *read_flow_node(Reader *reader, Py_ssize_t at, Py_ssize_t end, Py_ssize_t *next) {
    char c = reader->text[at];
    if (c == '{' || c == '[')
        return read_flow(reader, at, end, next);
    if (c == '"' || c == '\'')
        return read_quoted(reader, at, end, next);
    return read_flow_plain(reader, at, end, next);
}

/* Place a mapping's key and value (both owned): 0, or -1 with the reader's status set. */
static int set_entry(Reader *reader, PyObject *mapping, PyObject *key, PyObject *value) {
    int present = PyUnicode_CheckExact(key) ? PyDict_Contains(mapping, key) : 1;
    int status = present == 0 ? PyDict_SetItem(mapping, key, value) : -1;
    Py_DECREF(key);
    Py_DECREF(value);
    if (status < 0)
        reader->status = present > 0 ? UNUSUAL : FAILED; /* not a string, or a duplicate: the builder's */
    return status;
}

/* A flow mapping or sequence that closes on its line: "{a: 1, b: [x, y]}". */
static PyObject *read_flow(Reader *reader, Py_ssize_t at, Py_ssize_t end, Py_ssize_t *next) {
    const char *text = reader->text;
    int mapping = text[at] == '{';
    char close = mapping ? '}' : ']';
    PyObject *collection = open_container(reader, mapping);
    if (collection == NULL)
        return NULL;
    Py_ssize_t i = skip_spaces(text, at + 1, end);
    if (i < end && text[i] == close) {
        i++;
    } else {
        for (;;) {
            if (i >= end || text[i] == close)
                goto unusual; /* unclosed, or a trailing comma */
            PyObject *key = NULL, *value;
            if (mapping) {
                if (text[i] == '{' || text[i] == '[')
                    goto unusual; /* a collection as a key */
                Py_ssize_t start = i;
                if ((key = read_flow_node(reader, i, end, &i)) == NULL)
                    goto fail;
                if (i + 1 >= end || text[i] != ':' || text[i + 1] != ' ' || i - start >= MAX_SIMPLE_KEY) {
                    Py_DECREF(key);
                    goto unusual;
                }
                i = skip_spaces(text, i + 1, end);
                if (i >= end || text[i] == ',' || text[i] == close) {
                    Py_DECREF(key);
                    goto unusual; /* an empty value */
                }
            }
            if ((value = read_flow_node(reader, i, end, &i)) == NULL) {
                Py_XDECREF(key);
                goto fail;
            }
            if (mapping) {
                if (set_entry(reader, collection, key, value) < 0)
                    goto fail;
            } else if (append_item(reader, collection, value) < 0) {
                goto fail;
            }
            i = skip_spaces(text, i, end);
            if (i < end && text[i] == ',') {
                i = skip_spaces(text, i + 1, end);
            } else if (i < end && text[i] == close) {
                i++;
                break;
            } else {
                goto unusual; /* "a: b" in a sequence, text after a value */
            }
        }
    }
    *next = i;
    return close_container(reader, collection, 0);
unusual:
    reader->status = UNUSUAL;
fail:
    return close_container(reader, collection, 1);
}

/* A value that ends its line, after which only spaces or a comment may follow. */
static PyObject *read_inline(Reader *reader, const Line *line, Py_ssize_t at) {
    const char *text = reader->text;
    Py_ssize_t end = line->end, after;
    PyObject *value;
    char first = text[at];
    if (first == '"' || first == '\'') {
        value = read_quoted(reader, at, end, &after);
    } else if (first == '{' || first == '[') {
        value = read_flow(reader, at, end, &after);
    } else {
        /* plain: not an indicator ("-x" is a scalar, "- x" an item), no ": " inside, up to a comment */
        if (is_indicator(first) && !(first == '-' && at + 1 < end && text[at + 1] != ' '))
            return halt(reader, UNUSUAL);
        Py_ssize_t i = at;
        for (; i < end; i++) {
            if (text[i] == ':' && (i + 1 == end || text[i + 1] == ' '))
                return halt(reader, UNUSUAL);
            if (text[i] == '#' && text[i - 1] == ' ')
                break;
        }
        while (text[i - 1] == ' ')
            i--;
        after = i;
        value = read_scalar(reader, text + at, i - at, 1);
    }
    if (value == NULL)
        return NULL;
    Py_ssize_t rest = skip_spaces(text, after, end);
    if (rest < end && !(text[rest] == '#' && rest > after)) {
        Py_DECREF(value);
        return halt(reader, UNUSUAL);
    }
    reader->at++;
    return value;
}

/* Whether the text at `at` is a mapping key ("name: x", "'a b': c"), not a value. */
static int starts_key(const Reader *reader, const Line *line, Py_ssize_t at) {
    const char *text = reader->text;
    Py_ssize_t end = line->end;
    if (text[at] == '"' || text[at] == '\'') {
        Py_ssize_t close = closing_quote(text, at, end);
        return close >= 0 && close + 1 < end && text[close + 1] == ':';
    }
    if (text[at] == '{' || text[at] == '[')
        return 0;
    for (Py_ssize_t i = at; i < end; i++) {
        if (text[i] == ':' && (i + 1 == end || text[i + 1] == ' '))
            return 1;
        if (text[i] == '#' && i > at && text[i - 1] == ' ')
            return 0;
    }
    return 0;
}

/* A block mapping key up to its ": " (or ":" at the end of the line); *next is past the colon. */
static PyObject *read_key(Reader *reader, const Line *line, Py_ssize_t at, Py_ssize_t *next) {
    const char *text = reader->text;
    Py_ssize_t end = line->end, colon;
    PyObject *key;
    if (text[at] == '"' || text[at] == '\'') {
        if ((key = read_quoted(reader, at, end, &colon)) == NULL)
            return NULL;
    } else {
        if (is_indicator(text[at]))
            return halt(reader, UNUSUAL);
        for (colon = at; colon < end && !(text[colon] == ':' && (colon + 1 == end || text[colon + 1] == ' '));
             colon++)
            if (strchr(",[]{}#'\"", text[colon]))
                return halt(reader, UNUSUAL); /* legal in places, but not worth the rules */
        if (colon == end || text[colon - 1] == ' ')
            return halt(reader, UNUSUAL);
        if ((key = read_scalar(reader, text + at, colon - at, 1)) == NULL)
            return NULL;
    }
    if (colon >= end || text[colon] != ':' || (colon + 1 < end && text[colon + 1] != ' ') ||
        colon - at >= MAX_SIMPLE_KEY) {
        Py_DECREF(key);
        return halt(reader, UNUSUAL);
    }
    *next = colon + 1;
    return key;
}

static PyObject *read_node(Reader *reader, Py_ssize_t indent);
static PyObject *read_sequence(Reader *reader, Py_ssize_t indent);

/* The value under a key or dash with nothing after it: a deeper block, a sequence at a key's
 * own column, or else an empty (null) scalar. */
static PyObject *read_below(Reader *reader, Py_ssize_t column, int sequence_at_column) {
    if (reader->at < reader->count) {
        const Line *next = &reader->lines[reader->at];
        if (next->indent > column)
            return read_node(reader, next->indent);
        if (sequence_at_column && next->indent == column && is_item(reader, next))
            return read_sequence(reader, column);
    }
    return read_scalar(reader, "", 0, 1);
}

/* Entries at `column`; the first starts at offset `at` of the current line (after a dash, or
 * the line's own start). */
static PyObject *read_mapping(Reader *reader, Py_ssize_t column, Py_ssize_t at) {
    PyObject *mapping = open_container(reader, 1);
    if (mapping == NULL)
        return NULL;
    for (;;) {
        const Line *line = &reader->lines[reader->at];
        Py_ssize_t after;
        PyObject *key = read_key(reader, line, at, &after), *value;
        if (key == NULL)
            goto fail;
        after = skip_spaces(reader->text, after, line->end);
        if (after == line->end || reader->text[after] == '#') {
            reader->at++;
            value = read_below(reader, column, 1);
        } else {
            value = read_inline(reader, line, after);
        }
        if (value == NULL) {
            Py_DECREF(key);
            goto fail;
        }
        if (set_entry(reader, mapping, key, value) < 0)
            goto fail;
        if (reader->at == reader->count || reader->lines[reader->at].indent < column)
            break;
        line = &reader->lines[reader->at];
        if (line->indent > column || is_item(reader, line)) {
            reader->status = UNUSUAL; /* a continued scalar, or an item where a key belongs */
            goto fail;
        }
        at = line->start;
    }
    return close_container(reader, mapping, 0);
fail:
    return close_container(reader, mapping, 1);
}

static PyObject *read_sequence(Reader *reader, Py_ssize_t indent) {
    PyObject *sequence = open_container(reader, 0);
    if (sequence == NULL)
        return NULL;
    const char *text = reader->text;
    for (;;) {
        const Line *line = &reader->lines[reader->at];
        Py_ssize_t at = skip_spaces(text, line->start + 1, line->end);
        PyObject *item;
        if (at == line->end || text[at] == '#') {
            reader->at++;
            item = read_below(reader, indent, 0);
        } else if (text[at] == '-' && (at + 1 == line->end || text[at + 1] == ' ')) {
            item = halt(reader, UNUSUAL); /* "- - x" */
        } else if (starts_key(reader, line, at)) {
            item = read_mapping(reader, at - (line->start - line->indent), at);
        } else {
            item = read_inline(reader, line, at);
        }
        if (item == NULL || append_item(reader, sequence, item) < 0)
            goto fail;
        if (reader->at == reader->count)
            break;
        line = &reader->lines[reader->at];
        if (line->indent < indent || (line->indent == indent && !is_item(reader, line)))
            break;
        if (line->indent > indent) {
            reader->status = UNUSUAL;
            goto fail;
        }
    }
    return close_container(reader, sequence, 0);
fail:
    return close_container(reader, sequence, 1);
}

static PyObject *read_node(Reader *reader, Py_ssize_t indent) {
    const Line *line = &reader->lines[reader->at];
    return is_item(reader, line) ? read_sequence(reader, indent) : read_mapping(reader, indent, line->start);
}

/* [document] by the block reader, None where libyaml must read the text, or NULL with an exception. */
static PyObject *read_block(const char *text, Py_ssize_t size) {
    Reader reader = {text, NULL, 0, 0, 0, 0, UNUSUAL};
    int status = split_lines(&reader, text, size);
    PyObject *root = NULL;
    if (status == PLACED && reader.count > 0 && reader.lines[0].indent == 0) {
        root = read_node(&reader, 0);
        status = reader.status;
        if (root != NULL && reader.at != reader.count) {
            Py_CLEAR(root); /* a sequence's item where the root mapping's key belongs, and the like */
            status = UNUSUAL;
        }
    }
    PyMem_Free(reader.lines);
    if (root != NULL) {
        PyObject *docs = PyList_New(1);
        if (docs == NULL) {
            Py_DECREF(root);
            return NULL;
        }
        PyList_SET_ITEM(docs, 0, root);
        return docs;
    }
    if (status == FAILED)
        return NULL;
    Py_RETURN_NONE;
}

/* text's UTF-8 for the readers; NULL with an exception set before configure(), or NULL with
 * none when text does not encode (lone surrogates): the builder reports that. */
static const char *readable(PyObject *text, Py_ssize_t *size) {
    if (resolve_plain == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "gen_yaml_accel.configure() has not been called");
        return NULL;
    }
    const char *utf8 = PyUnicode_AsUTF8AndSize(text, size);
    if (utf8 == NULL)
        PyErr_Clear();
    return utf8;
}

static PyObject *block_documents(PyObject *module, PyObject *text) {
    (void)module;
    Py_ssize_t size;
    const char *utf8 = readable(text, &size);
    if (utf8 == NULL)
        return PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
    return read_block(utf8, size);
}

static int tagged(const yaml_char_t *tag) {
    return tag != NULL && strcmp((const char *)tag, "!") != 0;
}

static PyObject *simple_documents(PyObject *module, PyObject *text) {
    (void)module;
    Py_ssize_t size;
    const char *utf8 = readable(text, &size);
    if (utf8 == NULL)
        return PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
    PyObject *docs = read_block(utf8, size);
    if (docs != Py_None)
        return docs; /* read, or failed */
    Py_DECREF(docs);
    if ((docs = PyList_New(0)) == NULL)
        return NULL;
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) {
        Py_DECREF(docs);
        return PyErr_NoMemory();
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)utf8, (size_t)size);
    yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);

    Stack stack = {NULL, 0, 0};
    Py_ssize_t nodes = 0;
    int status = PLACED, done = 0;
    yaml_event_t event;
    while (!done && status == PLACED) {
        if (!yaml_parser_parse(&parser, &event)) {
            status = UNUSUAL; /* a syntax error: the builder locates and reports it */
            break;
        }
        switch (event.type) {
        case YAML_STREAM_END_EVENT:
            done = 1;
            break;
        case YAML_DOCUMENT_START_EVENT:
            stack_clear(&stack);
            nodes = 0;
            break;
        case YAML_DOCUMENT_END_EVENT: {
            PyObject *root = Py_None;
            if (stack.size > 0) {
                root = stack.frames[--stack.size].value;
                Py_XDECREF(stack.frames[stack.size].key);
            } else {
                Py_INCREF(root);
            }
            status = PyList_Append(docs, root) == 0 ? PLACED : FAILED;
            Py_DECREF(root);
            break;
        }
        case YAML_SCALAR_EVENT: {
            if (event.data.scalar.anchor != NULL || tagged(event.data.scalar.tag) || ++nodes > max_nodes) {
                status = UNUSUAL;
                break;
            }
            PyObject *value = resolved_scalar((const char *)event.data.scalar.value,
                                              (Py_ssize_t)event.data.scalar.length, event.data.scalar.plain_implicit);
            if (value == NULL)
                status = FAILED;
            else if (value == unusual)
                status = UNUSUAL;
            else
                status = place(&stack, value);
            break;
        }
        case YAML_MAPPING_START_EVENT:
        case YAML_SEQUENCE_START_EVENT: {
            int mapping = event.type == YAML_MAPPING_START_EVENT;
            const yaml_char_t *anchor = mapping ? event.data.mapping_start.anchor : event.data.sequence_start.anchor;
            const yaml_char_t *tag = mapping ? event.data.mapping_start.tag : event.data.sequence_start.tag;
            if (anchor != NULL || tagged(tag) || ++nodes > max_nodes || stack.size + 1 > max_depth) {
                status = UNUSUAL;
                break;
            }
            PyObject *container = mapping ? PyDict_New() : PyList_New(0);
            status = container != NULL && stack_push(&stack, container) == 0 ? PLACED : FAILED;
            break;
        }
        case YAML_MAPPING_END_EVENT:
        case YAML_SEQUENCE_END_EVENT: {
            if (stack.size == 0) { /* libyaml never sends an unmatched end; refuse rather than trust */
                status = UNUSUAL;
                break;
            }
            Frame frame = stack.frames[--stack.size];
            Py_XDECREF(frame.key);
            status = place(&stack, frame.value);
            break;
        }
        case YAML_ALIAS_EVENT:
            status = UNUSUAL;
            break;
        default: /* stream start, no event */
            break;
        }
        yaml_event_delete(&event);
    }
    stack_clear(&stack);
    PyMem_Free(stack.frames);
    yaml_parser_delete(&parser);
    if (status == PLACED)
        return docs;
    Py_DECREF(docs);
    if (status == FAILED)
        return NULL;
    Py_RETURN_NONE;
}

static int buffer_pad(Buffer *buffer, Py_ssize_t spaces) {
    if (spaces == 0)
        return 0; /* as in buffer_put */
    if (buffer_reserve(buffer, spaces) < 0)
        return -1;
    memset(buffer->data + buffer->size, ' ', (size_t)spaces);
    buffer->size += spaces;
    return 0;
}

typedef struct {
    PyObject *key_table, *value_table; /* str -> spelling, read only */
    PyObject *int_table;               /* int (never bool) -> spelling as a value, read only */
    PyObject *constants;               /* the spellings of True, False and None as values */
    PyObject *key_text, *value_text;   /* callbacks: scalar -> spelling, or an exception */
} Spelling;

static int put_str(Buffer *buffer, PyObject *text) {
    Py_ssize_t length;
    const char *utf8 = PyUnicode_AsUTF8AndSize(text, &length);
    return utf8 != NULL ? buffer_put(buffer, utf8, length) : -1;
}

/* How gen spells one scalar: 0, or -1 with an exception set (gen's "needs the full dumper" too). */
static int put_scalar(Buffer *buffer, PyObject *value, PyObject *table, PyObject *callback) {
    PyObject *text = NULL;
    if (table != NULL) {
        text = PyDict_GetItemWithError(table, value);
        if (text != NULL && PyUnicode_CheckExact(text))
            return put_str(buffer, text);
        if (PyErr_Occurred())
            return -1;
    }
    if ((text = PyObject_CallOneArg(callback, value)) == NULL)
        return -1;
    int status = -1;
    if (PyUnicode_Check(text))
        status = put_str(buffer, text);
    else
        PyErr_SetString(PyExc_TypeError, "a spelling must be a str");
    Py_DECREF(text);
    return status;
}

static int put_key(Buffer *buffer, PyObject *key, const Spelling *spelling) {
    return put_scalar(buffer, key, PyUnicode_CheckExact(key) ? spelling->key_table : NULL, spelling->key_text);
}

static int put_value(Buffer *buffer, PyObject *value, const Spelling *spelling) {
    int constant = value == Py_True ? 0 : value == Py_False ? 1 : value == Py_None ? 2 : -1;
    if (constant >= 0)
        return put_str(buffer, PyTuple_GET_ITEM(spelling->constants, constant));
    PyObject *table = PyUnicode_CheckExact(value) ? spelling->value_table
                      : PyLong_CheckExact(value)  ? spelling->int_table
                                                  : NULL;
    return put_scalar(buffer, value, table, spelling->value_text);
}

/* A value's own lines follow when it is a non-empty mapping or sequence. */
static int nested(PyObject *value) {
    return (PyDict_Check(value) && PyDict_GET_SIZE(value) > 0) || (PyList_Check(value) && PyList_GET_SIZE(value) > 0);
}

/* A value on its key's or dash's line: an empty mapping or sequence, or a scalar. */
static int put_inline(Buffer *buffer, PyObject *value, const Spelling *spelling) {
    if (PyDict_Check(value))
        return buffer_put(buffer, "{}", 2);
    if (PyList_Check(value))
        return buffer_put(buffer, "[]", 2);
    return put_value(buffer, value, spelling);
}

static int put_block(Buffer *buffer, PyObject *value, Py_ssize_t indent, const Spelling *spelling);

static int put_mapping(Buffer *buffer, PyObject *mapping, Py_ssize_t indent, const Spelling *spelling) {
    Py_ssize_t position = 0;
    PyObject *key, *value;
    while (PyDict_Next(mapping, &position, &key, &value)) {
        Py_INCREF(key); /* the callbacks run Python code: hold what we walk */
        Py_INCREF(value);
        int status = buffer_pad(buffer, indent);
        if (status == 0)
            status = put_key(buffer, key, spelling);
        if (status == 0 && nested(value)) {
            status = buffer_put(buffer, ":\n", 2);
            /* a mapping's sequences are written indentless, as PyYAML does */
            if (status == 0)
                status = put_block(buffer, value, PyDict_Check(value) ? indent + 2 : indent, spelling);
        } else if (status == 0) {
            status = buffer_put(buffer, ": ", 2);
            if (status == 0)
                status = put_inline(buffer, value, spelling);
            if (status == 0)
                status = buffer_put(buffer, "\n", 1);
        }
        Py_DECREF(key);
        Py_DECREF(value);
        if (status < 0)
            return -1;
    }
    return 0;
}

static int put_sequence(Buffer *buffer, PyObject *sequence, Py_ssize_t indent, const Spelling *spelling) {
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(sequence); i++) {
        PyObject *item = PyList_GET_ITEM(sequence, i);
        Py_INCREF(item);
        int status;
        if (nested(item)) {
            /* the item's lines, then "- " over the two spaces before its first line's text */
            Py_ssize_t first_line = buffer->size;
            status = put_block(buffer, item, indent + 2, spelling);
            if (status == 0)
                memcpy(buffer->data + first_line + indent, "- ", 2);
        } else {
            status = buffer_pad(buffer, indent);
            if (status == 0)
                status = buffer_put(buffer, "- ", 2);
            if (status == 0)
                status = put_inline(buffer, item, spelling);
            if (status == 0)
                status = buffer_put(buffer, "\n", 1);
        }
        Py_DECREF(item);
        if (status < 0)
            return -1;
    }
    return 0;
}

static int put_block(Buffer *buffer, PyObject *value, Py_ssize_t indent, const Spelling *spelling) {
    if (Py_EnterRecursiveCall(" while writing YAML"))
        return -1;
    int status = PyDict_Check(value) ? put_mapping(buffer, value, indent, spelling)
                                     : put_sequence(buffer, value, indent, spelling);
    Py_LeaveRecursiveCall();
    return status;
}

static PyObject *block_yaml(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *value;
    Spelling spelling;
    if (!PyArg_ParseTuple(args, "OO!O!O!O!OO", &value, &PyDict_Type, &spelling.key_table, &PyDict_Type,
                          &spelling.value_table, &PyDict_Type, &spelling.int_table, &PyTuple_Type,
                          &spelling.constants, &spelling.key_text, &spelling.value_text))
        return NULL;
    if (!nested(value)) {
        PyErr_SetString(PyExc_TypeError, "block_yaml writes a non-empty mapping or sequence");
        return NULL;
    }
    if (PyTuple_GET_SIZE(spelling.constants) != 3 || !PyUnicode_Check(PyTuple_GET_ITEM(spelling.constants, 0)) ||
        !PyUnicode_Check(PyTuple_GET_ITEM(spelling.constants, 1)) ||
        !PyUnicode_Check(PyTuple_GET_ITEM(spelling.constants, 2))) {
        PyErr_SetString(PyExc_TypeError, "constants must be the spellings of True, False and None");
        return NULL;
    }
    Buffer buffer = {NULL, 0, 0};
    return buffer_text(&buffer, put_block(&buffer, value, 0, &spelling));
}

typedef struct {
    PyObject *table;       /* str -> flow spelling, read only */
    PyObject *key_text;    /* callback: any key -> spelling of str(key) */
    PyObject *scalar_text; /* callback: any other value -> flow spelling, or an exception */
} FlowSpelling;

static int put_spelled(Buffer *buffer, PyObject *value, PyObject *table, PyObject *callback) {
    if (PyUnicode_CheckExact(value)) {
        PyObject *text = PyDict_GetItemWithError(table, value);
        if (text != NULL && PyUnicode_CheckExact(text))
            return put_str(buffer, text);
        if (PyErr_Occurred())
            return -1;
    }
    return put_scalar(buffer, value, NULL, callback);
}

static int put_flow(Buffer *buffer, PyObject *value, const FlowSpelling *spelling);

static int put_flow_items(Buffer *buffer, PyObject *value, const FlowSpelling *spelling) {
    int status = 0;
    if (PyDict_CheckExact(value)) {
        Py_ssize_t position = 0;
        PyObject *key, *item;
        status = buffer_put(buffer, "{", 1);
        for (int first = 1; status == 0 && PyDict_Next(value, &position, &key, &item); first = 0) {
            Py_INCREF(key); /* the callbacks run Python code: hold what we walk */
            Py_INCREF(item);
            if (!first)
                status = buffer_put(buffer, ", ", 2);
            if (status == 0)
                status = put_spelled(buffer, key, spelling->table, spelling->key_text);
            if (status == 0)
                status = buffer_put(buffer, ": ", 2);
            if (status == 0)
                status = put_flow(buffer, item, spelling);
            Py_DECREF(key);
            Py_DECREF(item);
        }
        return status == 0 ? buffer_put(buffer, "}", 1) : -1;
    }
    status = buffer_put(buffer, "[", 1);
    for (Py_ssize_t i = 0; status == 0 && i < PySequence_Fast_GET_SIZE(value); i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(value, i);
        Py_INCREF(item);
        if (i > 0)
            status = buffer_put(buffer, ", ", 2);
        if (status == 0)
            status = put_flow(buffer, item, spelling);
        Py_DECREF(item);
    }
    return status == 0 ? buffer_put(buffer, "]", 1) : -1;
}

static int put_flow(Buffer *buffer, PyObject *value, const FlowSpelling *spelling) {
    if (!PyDict_CheckExact(value) && !PyList_CheckExact(value) && !PyTuple_CheckExact(value))
        return put_spelled(buffer, value, spelling->table, spelling->scalar_text);
    if (Py_EnterRecursiveCall(" while writing a YAML flow value"))
        return -1;
    int status = put_flow_items(buffer, value, spelling);
    Py_LeaveRecursiveCall();
    return status;
}

static PyObject *flow_yaml(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *value;
    FlowSpelling spelling;
    if (!PyArg_ParseTuple(args, "OO!OO", &value, &PyDict_Type, &spelling.table, &spelling.key_text,
                          &spelling.scalar_text))
        return NULL;
    Buffer buffer = {NULL, 0, 0};
    return buffer_text(&buffer, put_flow(&buffer, value, &spelling));
}

static PyObject *configure(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *callback, *sentinel;
    const char *chars;
    Py_ssize_t nchars, limit, depth;
    if (!PyArg_ParseTuple(args, "OOs#nn", &callback, &sentinel, &chars, &nchars, &limit, &depth))
        return NULL;
    if (!PyCallable_Check(callback)) {
        PyErr_SetString(PyExc_TypeError, "resolve_plain must be callable");
        return NULL;
    }
    Py_INCREF(callback);
    Py_INCREF(sentinel);
    Py_XSETREF(resolve_plain, callback);
    Py_XSETREF(unusual, sentinel);
    memset(resolver_chars, 0, sizeof(resolver_chars));
    for (Py_ssize_t i = 0; i < nchars; i++)
        resolver_chars[(unsigned char)chars[i]] = 1;
    max_nodes = limit;
    max_depth = depth;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"configure", configure, METH_VARARGS,
     "configure(resolve_plain, unusual, first_chars, max_nodes, max_depth): how plain scalars resolve, and limits."},
    {"block_documents", block_documents, METH_O,
     "block_documents(text) -> [document] by the block reader alone, or None where libyaml must read the text."},
    {"simple_documents", simple_documents, METH_O,
     "simple_documents(text) -> list of documents, or None when gen's builder must decide."},
    {"block_yaml", block_yaml, METH_VARARGS,
     "block_yaml(value, key_table, value_table, int_table, constants, key_text, value_text) -> block "
     "YAML of a non-empty mapping or sequence, scalars spelled by the tables or else the callbacks."},
    {"flow_yaml", flow_yaml, METH_VARARGS,
     "flow_yaml(value, table, key_text, scalar_text) -> the flow YAML of plain mappings, lists and tuples; "
     "strings spelled by the table, keys and other values by the callbacks."},
    {.ml_name = NULL},
};

static struct PyModuleDef module_def = {
    .m_base = PyModuleDef_HEAD_INIT,
    .m_name = "gen_yaml_accel",
    .m_doc = "Fast path of gen's YAML loader (a block reader, then libyaml), and the layout of its YAML writer.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit_gen_yaml_accel(void) {
    return PyModule_Create(&module_def);
}
