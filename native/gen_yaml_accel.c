/*
 * gen_yaml_accel: libyaml's parser building Python values in C, for the simple documents that
 * nearly every policy and rendered manifest is (mappings, sequences, untagged scalars, unique
 * string keys).
 *
 * It mirrors generator.load._simple_documents exactly and, like it, only ever accepts: for
 * anything else (anchors, aliases, tags, merge keys, duplicate or non-string keys, too many
 * nodes or levels, a syntax error) it returns None and gen's own builder reads the text again, decides
 * and reports. Plain scalars whose first character could start a non-string (YAML 1.1's
 * implicit resolvers are keyed by first character) are resolved by the Python callback gen
 * registers, so types follow the same code on both paths.
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

/* A new reference, unusual (borrowed, not counted), or NULL with an exception set. */
static PyObject *scalar(yaml_event_t *event) {
    const char *text = (const char *)event->data.scalar.value;
    Py_ssize_t length = (Py_ssize_t)event->data.scalar.length;
    PyObject *value = PyUnicode_DecodeUTF8(text, length, "strict");
    if (value == NULL || !event->data.scalar.plain_implicit)
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

static int tagged(const yaml_char_t *tag) {
    return tag != NULL && strcmp((const char *)tag, "!") != 0;
}

static PyObject *simple_documents(PyObject *module, PyObject *text) {
    (void)module;
    if (resolve_plain == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "gen_yaml_accel.configure() has not been called");
        return NULL;
    }
    Py_ssize_t size;
    const char *utf8 = PyUnicode_AsUTF8AndSize(text, &size);
    if (utf8 == NULL) { /* not encodable (lone surrogates): the builder reports it */
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    PyObject *docs = PyList_New(0);
    if (docs == NULL)
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
            PyObject *value = scalar(&event);
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

static int buffer_pad(Buffer *buffer, Py_ssize_t spaces) {
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
    .m_doc = "libyaml-backed fast path of gen's YAML loader, and the layout of its YAML writer.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit_gen_yaml_accel(void) {
    return PyModule_Create(&module_def);
}
