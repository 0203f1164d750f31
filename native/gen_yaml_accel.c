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
    {.ml_name = NULL},
};

static struct PyModuleDef module_def = {
    .m_base = PyModuleDef_HEAD_INIT,
    .m_name = "gen_yaml_accel",
    .m_doc = "libyaml-backed fast path of gen's YAML loader.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit_gen_yaml_accel(void) {
    return PyModule_Create(&module_def);
}
