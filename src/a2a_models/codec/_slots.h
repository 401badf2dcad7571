/* The models' object slots, for both extension modules: codec/_speedups.c (through
 * _speedups.h) and adapters/grpc/_pbwire.c (the gRPC binding sits above the codec
 * and may include this header; the codec includes nothing of the binding). */
#ifndef A2A_SLOTS_H
#define A2A_SLOTS_H
#include <Python.h> /* (after the includer's PY_SSIZE_T_CLEAN) */
#include <structmember.h>

/* The slot at offset off of obj (a PyObject * field; NULL while unset). */
#define SLOT(obj, off) ((PyObject **)((char *)(obj) + (off)))

/* The offset of the slot a __slots__ member descriptor stands for; -1 (TypeError)
 * for anything but a writable object slot. */
static inline int
slot_offset(PyObject *descr, Py_ssize_t *out)
{
    if (!Py_IS_TYPE(descr, &PyMemberDescr_Type)) {
        PyErr_SetString(PyExc_TypeError, "expected a slot member descriptor");
        return -1;
    }
    PyMemberDef *m = ((PyMemberDescrObject *)descr)->d_member;
    if (m->type != T_OBJECT_EX || (m->flags & READONLY)) {
        PyErr_SetString(PyExc_TypeError, "expected a writable object slot");
        return -1;
    }
    *out = m->offset;
    return 0;
}

#endif
