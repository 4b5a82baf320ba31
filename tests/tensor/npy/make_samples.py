#!/usr/bin/env python3
"""Writes the sample .npy files that test_tensor_npy reads (run once; the outputs are checked in).

numpy is not needed (nor was it installed where these were made): the bytes follow the
format spec in numpy/lib/format.py, and the valid files reproduce exactly what numpy writes
for the same arrays (`np.save` of a C-order float32/int32 array: version 1.0, the header
"{'descr': ..., 'fortran_order': False, 'shape': ..., }" padded with spaces and '\\n' so the
data starts on a 64-byte boundary). Other valid files imitate older or other writers
(version 2.0/3.0 headers, Python 2's "3L" ints and 16-byte padding, keys in another order);
the bad_*.npy files each break one rule, and the test names the message each must produce.

    python3 tests/tensor/npy/make_samples.py
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def npy(header, data, version=(1, 0), align=64):
    """Magic, version, header length, the header padded to `align`, then the data bytes."""
    pre = 6 + 2 + (2 if version[0] == 1 else 4)
    total = pre + len(header) + 1
    pad = (align - total % align) % align
    h = (header + ' ' * pad + '\n').encode('latin1')
    ln = struct.pack('<H', len(h)) if version[0] == 1 else struct.pack('<I', len(h))
    return b'\x93NUMPY' + bytes(version) + ln + h + data


def f32(values):
    return b''.join(struct.pack('<f', v) for v in values)


def i32(values):
    return b''.join(struct.pack('<i', v) for v in values)


def i64(values):
    return b''.join(struct.pack('<q', v) for v in values)


def numpy_header(descr, shape):
    dims = '(' + ', '.join(str(d) for d in shape) + (',)' if len(shape) == 1 else ')')
    return "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, dims)


inf, nan = float('inf'), float('nan')
files = {
    # Valid.
    'f32_2x3.npy': npy(numpy_header('<f4', (2, 3)), f32([0.5, -0.25, 1.0, 2.0, 2.5, 3.0])),
    'f32_specials.npy': npy(numpy_header('<f4', (5,)), f32([nan, inf, -inf, -0.0, 1e-45])),
    'i32_3x2.npy': npy(numpy_header('<i4', (3, 2)), i32([-2, -1, 0, 1, 2, 16777216])),
    # int64 class labels, as np.save writes sklearn's targets; 2^25 is exact in f32 too.
    'i64_labels.npy': npy(numpy_header('<i8', (2, 3)), i64([3, 0, 9, 1, -7, 33554432])),
    'f32_v2.npy': npy(numpy_header('<f4', (2, 2)), f32([1, 2, 3, 4]), version=(2, 0)),
    'f32_v3.npy': npy(numpy_header('<f4', (1, 3)), f32([7, 8, 9]), version=(3, 0)),
    'f32_py2.npy': npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 2L), }",
                       f32([1, -1, 0.125, 64]), align=16),
    'f32_4d_reordered.npy': npy('{"shape":(1,2,2,1),"fortran_order" : False,\'descr\':"<f4"}',
                                f32([1, 2, 3, 4])),
    # Invalid: one broken rule each.
    'bad_magic.npy': b'\x93NUMPZ' + npy(numpy_header('<f4', (1,)), f32([1]))[6:],
    'bad_version.npy': npy(numpy_header('<f4', (1,)), f32([1]), version=(9, 0)),
    'bad_f8.npy': npy(numpy_header('<f8', (2,)), struct.pack('<2d', 1, 2)),
    'bad_big_endian.npy': npy(numpy_header('>f4', (2,)), struct.pack('>2f', 1, 2)),
    'bad_fortran.npy': npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }",
                           f32([1, 2, 3, 4])),
    'bad_no_shape.npy': npy("{'descr': '<f4', 'fortran_order': False, }", f32([1])),
    'bad_0d.npy': npy(numpy_header('<f4', ()), f32([1])),
    'bad_negative_dim.npy': npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }",
                                b''),
    'bad_short_data.npy': npy(numpy_header('<f4', (2, 3)), f32([1, 2, 3, 4, 5])),
    'bad_long_data.npy': npy(numpy_header('<f4', (2,)), f32([1, 2, 3])),
    # Integers f32 cannot hold exactly (2^24 + 1; 2^53 + 1).
    'bad_i32_inexact.npy': npy(numpy_header('<i4', (2, 2)), i32([1, 2, 3, 16777217])),
    'bad_i64_inexact.npy': npy(numpy_header('<i8', (3,)), i64([0, 9007199254740993, 5])),
    'bad_header_len.npy': b'\x93NUMPY\x01\x00\xff\x00' + b"{'descr': '<f4'",
}

for name, data in files.items():
    with open(os.path.join(HERE, name), 'wb') as f:
        f.write(data)
