"""rbdlearn.urdf: the parser on small hand-checked URDFs, its error messages, and
a cross-check against Pinocchio's own URDF parser on robots from example-robot-data."""

import math
import warnings
import zlib

import numpy as np
import pinocchio as pin
import pytest

import rbdlearn as rbd
from rbdlearn import interop, urdf
from rbdlearn.spatial import inertia_params, to_angular_linear
from rbdlearn.articulated import SingularArticulatedInertia
from rbdlearn.urdf import URDFError

REL = 1e-9


def assert_close(actual, expected, rel=REL):
    """Equal up to ``rel`` times the largest entry of ``expected``."""
    expected = np.asarray(expected, dtype=float)
    scale = max(np.abs(expected).max(initial=0.0), 1e-300)
    np.testing.assert_allclose(actual, expected, rtol=0, atol=rel * scale)


# Rotations written out here rather than taken from rbdlearn.spatial, so the rpy
# convention is checked against an independent statement of it.
def Rx(a):
    return np.array([[1, 0, 0], [0, math.cos(a), -math.sin(a)], [0, math.sin(a), math.cos(a)]])


def Ry(a):
    return np.array([[math.cos(a), 0, math.sin(a)], [0, 1, 0], [-math.sin(a), 0, math.cos(a)]])


def Rz(a):
    return np.array([[math.cos(a), -math.sin(a), 0], [math.sin(a), math.cos(a), 0], [0, 0, 1]])


# --- building blocks for inline URDFs -------------------------------------------------

def robot(*elements):
    return '<robot name="t">\n' + "\n".join(elements) + "\n</robot>"


def link(name, mass=None, xyz="0 0 0", rpy="0 0 0", inertia=(0.1, 0, 0, 0.1, 0, 0.1)):
    if mass is None:
        return f'<link name="{name}"/>'
    ixx, ixy, ixz, iyy, iyz, izz = inertia
    return (f'<link name="{name}"><inertial><origin xyz="{xyz}" rpy="{rpy}"/>'
            f'<mass value="{mass}"/><inertia ixx="{ixx}" ixy="{ixy}" ixz="{ixz}" '
            f'iyy="{iyy}" iyz="{iyz}" izz="{izz}"/></inertial></link>')


def joint(name, kind, parent, child, xyz=None, rpy=None, axis=None):
    origin = ""
    if xyz is not None or rpy is not None:
        origin = ("<origin" + (f' xyz="{xyz}"' if xyz is not None else "")
                  + (f' rpy="{rpy}"' if rpy is not None else "") + "/>")
    ax = f'<axis xyz="{axis}"/>' if axis is not None else ""
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/>'
            f'<child link="{child}"/>{origin}{ax}</joint>')


def pose(model, q, i):
    return rbd.body_pose(rbd.forward_kinematics(model, q)[i])


# --- conventions ----------------------------------------------------------------------

def test_rpy_is_fixed_axis_roll_then_pitch_then_yaw():
    r, p, y = 0.3, -0.5, 1.1
    m = urdf.loads(robot(link("a"), link("b"),
                         joint("j", "revolute", "a", "b", xyz="1 2 3", rpy=f"{r} {p} {y}")))
    R, pos = pose(m, np.zeros(1), 1)
    assert_close(R, Rz(y) @ Ry(p) @ Rx(r))
    assert_close(pos, [1, 2, 3])
    # the order matters: pitch 90° then yaw 90° (about the fixed axes) takes z to y
    m = urdf.loads(robot(link("a"), link("b"),
                         joint("j", "fixed", "a", "b"), link("c"),
                         joint("k", "revolute", "a", "c", rpy=f"0 {math.pi / 2} {math.pi / 2}")))
    R, _ = pose(m, np.zeros(1), 1)
    assert_close(R @ [0, 0, 1], [0, 1, 0], rel=1e-12)


def test_inertial_origin_and_rpy():
    m = urdf.loads(robot(link("a"), link("b", mass=2.0, xyz="0.1 0.2 0.3",
                                           rpy=f"0 0 {math.pi / 2}", inertia=(1, 0, 0, 2, 0, 3)),
                         joint("j", "revolute", "a", "b")))
    mass, c, Ic = inertia_params(m.I[1])
    assert mass == pytest.approx(2.0)
    assert_close(c, [0.1, 0.2, 0.3])
    # a yaw of 90° swaps the x and y principal axes
    assert_close(Ic, np.diag([2.0, 1.0, 3.0]), rel=1e-12)


def test_continuous_joint_and_axis_defaults():
    m = urdf.loads(robot(link("a"), link("b"), link("c"),
                         joint("spin", "continuous", "a", "b", axis="0 0 2"),
                         joint("slide", "prismatic", "b", "c")))
    assert isinstance(m.joints[1], rbd.Revolute) and m.joints[1].nq == 1
    assert_close(m.joints[1].axis, [0, 0, 1])                   # normalised
    assert isinstance(m.joints[2], rbd.Prismatic)
    assert_close(m.joints[2].axis, [1, 0, 0])                   # URDF default axis
    R, p = pose(m, np.array([math.pi / 2, 0.5]), 2)
    assert_close(p, [0, 0.5, 0], rel=1e-12)                     # x of b is y of a
    assert_close(R, Rz(math.pi / 2))


def test_joint_order_names_and_root():
    # root listed last; children of a link are ordered by joint name (as in
    # Pinocchio), depth first, a fixed joint visited where it sorts
    doc = robot(link("L4"), link("L3"), link("L2"), link("L1", mass=1), link("root"),
                joint("c", "prismatic", "L3", "L4"),
                joint("b", "revolute", "root", "L2"),
                joint("z1", "revolute", "L1", "L3"),
                joint("a_fix", "fixed", "root", "L1"))
    m = urdf.loads(doc)
    assert m.names == ["base", "z1", "c", "b"]
    assert m.body_names == ["root", "L3", "L4", "L2"]
    assert m.parent == [-1, 0, 1, 0]
    f = urdf.loads(doc, floating_base=True)
    assert f.names == ["base", "root_joint", "z1", "c", "b"]
    assert f.body_names == ["universe", "root", "L3", "L4", "L2"]
    assert f.parent == [-1, 0, 1, 2, 1]
    assert isinstance(f.joints[1], rbd.Free)
    assert f.I[1][5, 5] == pytest.approx(1.0)                  # L1 welded to the root


def test_fixed_joint_merges_mass_com_and_inertia():
    doc = robot(link("world"), link("L1", mass=1.0), link("L2", mass=3.0, xyz="0.5 0 0",
                                                        inertia=(0.2, 0, 0, 0.3, 0, 0.4)),
                link("L3", mass=0.5),
                joint("j1", "revolute", "world", "L1", axis="0 0 1"),
                joint("weld", "fixed", "L1", "L2", xyz="1 0 0", rpy=f"0 0 {math.pi / 2}"),
                joint("j2", "revolute", "L2", "L3", xyz="0 0 1", axis="1 0 0"))
    m = urdf.loads(doc)
    assert m.N == 2 and m.names == ["base", "j1", "j2"] and m.body_names == ["world", "L1", "L3"]
    assert m.parent == [-1, 0, 1]
    mass, c, Ic = inertia_params(m.I[1])
    assert mass == pytest.approx(4.0)
    # L2's COM in L1: (1, 0, 0) + Rz(90°)(0.5, 0, 0) = (1, 0.5, 0)
    com = (1.0 * np.zeros(3) + 3.0 * np.array([1.0, 0.5, 0.0])) / 4.0
    assert_close(c, com)
    # parallel-axis theorem about the merged COM; L2's principal axes x, y swapped
    def shifted(mk, Ick, ck):
        d = ck - com
        return Ick + mk * (d @ d * np.eye(3) - np.outer(d, d))
    expected = (shifted(1.0, 0.1 * np.eye(3), np.zeros(3))
                + shifted(3.0, np.diag([0.3, 0.2, 0.4]), np.array([1.0, 0.5, 0.0])))
    assert_close(Ic, expected)
    # L3 hangs from L1 through the weld: at q1 = 0.7 its origin is Rz(0.7)(1, 0, 1)
    q1 = 0.7
    R, p = pose(m, np.array([q1, 0.0]), 2)
    assert_close(p, Rz(q1) @ [1, 0, 1])
    assert_close(R, Rz(q1) @ Rz(math.pi / 2))
    assert_close(m.joints[2].axis, [1, 0, 0])


def test_chain_of_fixed_joints():
    doc = robot(link("world"), link("L1", mass=1.0), link("L2"),
                link("L3", mass=2.0, xyz="0 0 0.5"),
                link("L4", mass=1.0),
                joint("j1", "revolute", "world", "L1"),
                joint("f1", "fixed", "L1", "L2", xyz="0 1 0", rpy=f"{math.pi / 2} 0 0"),
                joint("f2", "fixed", "L2", "L3", xyz="0 0 1"),
                joint("j2", "prismatic", "L3", "L4", xyz="0 0 2", axis="0 0 1"))
    m = urdf.loads(doc)
    assert m.N == 2 and m.body_names == ["world", "L1", "L4"]
    mass, c, _ = inertia_params(m.I[1])
    assert mass == pytest.approx(3.0)
    # L3's z axis is Rx(90°) z = −y of L1, so its origin is (0, 1, 0) − (0, 1, 0) = 0
    # and its COM (0, −0.5, 0); L1's COM is at L1's origin
    assert_close(c, [0.0, -1.0 / 3.0, 0.0])
    R, p = pose(m, np.array([0.0, 0.25]), 2)
    assert_close(R, Rx(math.pi / 2))
    assert_close(p, [0, 1 - (1 + 2 + 0.25), 0])


def test_floating_base_with_fixed_joint_off_the_root():
    doc = robot(link("torso", mass=1.0), link("imu", mass=1.0), link("arm", mass=2.0),
                joint("imu_fix", "fixed", "torso", "imu", xyz="0 0 1"),
                joint("shoulder", "revolute", "imu", "arm", xyz="1 0 0", axis="0 1 0"))
    f = urdf.loads(doc, floating_base=True)
    assert f.names == ["base", "root_joint", "shoulder"]
    assert f.body_names == ["universe", "torso", "arm"]
    mass, c, _ = inertia_params(f.I[1])
    assert mass == pytest.approx(2.0)
    assert_close(c, [0, 0, 0.5])
    q = rbd.neutral_q(f)
    q[:3] = [1.0, 2.0, 3.0]
    _, p = pose(f, q, 2)
    assert_close(p, [2, 2, 4])
    # fixed base: the torso (and the imu welded to it) is the world, its mass dropped
    m = urdf.loads(doc)
    assert m.N == 1 and m.parent == [-1, 0] and m.body_names == ["torso", "arm"]
    assert sum(I[5, 5] for I in m.I[1:]) == pytest.approx(2.0)
    assert_close(rbd.body_pose(m.Xtree[1])[1], [1, 0, 1])


def test_massless_link_and_single_link_robot():
    m = urdf.loads(robot(link("a"), link("b"), joint("j", "revolute", "a", "b")))
    assert np.all(m.I[1] == 0)
    assert urdf.loads(robot(link("only"))).N == 0
    f = urdf.loads(robot(link("only", mass=1.5)), floating_base=True)
    assert f.N == 1 and f.I[1][5, 5] == pytest.approx(1.5)


def test_load_reads_a_file_with_an_encoding_declaration(tmp_path):
    doc = '<?xml version="1.0" encoding="utf-8"?>\n' + robot(
        link("bäse"), link("b"), joint("j", "continuous", "bäse", "b"))
    path = tmp_path / "r.urdf"
    path.write_text(doc, encoding="utf-8")
    m = urdf.load(path)
    assert m.body_names == ["bäse", "b"] and m.names == ["base", "j"]
    assert urdf.load(str(path), floating_base=True).nq == 8


def test_example_robot_path():
    path = urdf.example_robot_path("ur_description/urdf/ur5_robot.urdf")
    assert path.endswith("ur5_robot.urdf") and urdf.load(path).N == 6
    with pytest.raises(FileNotFoundError, match="no_such_robot"):
        urdf.example_robot_path("no_such_robot/robot.urdf")


# --- bad input: one case per error path -----------------------------------------------

AB = link("a") + link("b")
BAD = {
    "not xml": ("<robot><link name='a'></robot>", "not well-formed XML"),
    "not a robot": ("<model/>", "root element must be <robot>, got <model>"),
    "no link": (robot(), "no <link>"),
    "link without name": (robot(link("a"), "<link/>"), "<link> number 2 has no 'name'"),
    "duplicate link": (robot(link("a"), link("a")), "link 'a' is defined twice"),
    "joint without name": (robot(AB, '<joint type="fixed"><parent link="a"/>'
                                      '<child link="b"/></joint>'),
                           "<joint> number 1 has no 'name'"),
    "joint without type": (robot(AB, '<joint name="j"><parent link="a"/><child link="b"/></joint>'),
                           "joint 'j': <joint> has no 'type'"),
    "joint without parent": (robot(AB, '<joint name="j" type="fixed"><child link="b"/></joint>'),
                             "joint 'j': has no <parent>"),
    "joint without child": (robot(AB, '<joint name="j" type="fixed"><parent link="a"/></joint>'),
                            "joint 'j': has no <child>"),
    "child without link": (robot(AB, '<joint name="j" type="fixed"><parent link="a"/>'
                                     '<child/></joint>'),
                           "joint 'j': <child> has no 'link'"),
    "duplicate joint": (robot(AB, link("c"), joint("j", "fixed", "a", "b"),
                              joint("j", "fixed", "a", "c")),
                        "joint 'j' is defined twice"),
    "unknown type": (robot(AB, joint("hinge1", "hinge", "a", "b")),
                     "joint 'hinge1': unknown type 'hinge'"),
    "planar": (robot(AB, joint("p", "planar", "a", "b")),
               "joint 'p': type 'planar' is not supported"),
    "floating": (robot(AB, joint("f", "floating", "a", "b")),
                 "joint 'f': type 'floating' is not supported"),
    "missing parent link": (robot(AB, joint("j", "fixed", "ghost", "b")),
                            "joint 'j': parent link 'ghost' is not defined"),
    "missing child link": (robot(AB, joint("j", "fixed", "a", "ghost")),
                           "joint 'j': child link 'ghost' is not defined"),
    "two parents": (robot(AB, link("c"), joint("j1", "fixed", "a", "c"),
                          joint("j2", "fixed", "b", "c"), joint("j0", "fixed", "a", "b")),
                    "link 'c' has two parent joints, 'j1' and 'j2'"),
    "several roots": (robot(AB, link("c"), joint("j", "fixed", "a", "b")),
                      "several root links.*'a', 'c'"),
    "no root": (robot(AB, joint("j1", "fixed", "a", "b"), joint("j2", "fixed", "b", "a")),
                "no root link: joints 'j[12]', 'j[12]' form a cycle"),
    "cycle beside the root": (robot(AB, link("r"), link("c"), joint("j0", "fixed", "r", "c"),
                                    joint("j1", "revolute", "a", "b"),
                                    joint("j2", "revolute", "b", "a")),
                              "joints 'j[12]', 'j[12]' form a cycle through links"),
    "self loop": (robot(AB, joint("j0", "fixed", "a", "b"), link("c"),
                        joint("loop", "revolute", "c", "c")),
                  "joints 'loop' form a cycle through links 'c'"),
    "origin xyz with 2 numbers": (robot(AB, joint("elbow", "revolute", "a", "b", xyz="1 2")),
                                  r"joint 'elbow': <origin xyz='1 2'> needs 3 finite numbers"),
    "origin rpy not numbers": (robot(AB, joint("elbow", "revolute", "a", "b", rpy="abc")),
                               r"joint 'elbow': <origin rpy='abc'> needs 3"),
    "origin xyz nan": (robot(AB, joint("elbow", "fixed", "a", "b", xyz="0 nan 0")),
                       r"joint 'elbow': <origin xyz='0 nan 0'> needs 3 finite"),
    "axis with 4 numbers": (robot(AB, joint("wrist", "revolute", "a", "b", axis="1 0 0 0")),
                            r"joint 'wrist': <axis xyz='1 0 0 0'> needs 3"),
    "zero axis": (robot(AB, joint("wrist", "prismatic", "a", "b", axis="0 0 0")),
                  r"joint 'wrist': <axis xyz='0 0 0'> is zero"),
    "mass without value": (robot(link("a"), '<link name="b"><inertial><mass/>'
                                 '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/>'
                                 '</inertial></link>', joint("j", "fixed", "a", "b")),
                           "link 'b' <inertial>: <mass> has no 'value'"),
    "mass not a number": (robot(link("a"), link("b", mass="heavy"), joint("j", "fixed", "a", "b")),
                          "link 'b' <inertial>: <mass value='heavy'> needs 1 finite number"),
    "inertial without inertia": (robot(link("a"), '<link name="b"><inertial><mass value="1"/>'
                                       '</inertial></link>', joint("j", "fixed", "a", "b")),
                                 "link 'b' <inertial>: needs a <mass> and an <inertia>"),
    "inertia without ixy": (robot(link("a"), '<link name="b"><inertial><mass value="1"/>'
                                  '<inertia ixx="1" ixz="0" iyy="1" iyz="0" izz="1"/>'
                                  '</inertial></link>', joint("j", "fixed", "a", "b")),
                            "link 'b' <inertial>: <inertia> has no 'ixy'"),
    "negative mass": (robot(link("a"), link("forearm", mass=-1),
                            joint("j", "fixed", "a", "forearm")),
                      "link 'forearm' <inertial>: negative mass"),
    "inertia overflows": (robot(link("a"), link("forearm", mass=1e300, xyz="1e5 0 0"),
                                joint("j", "revolute", "a", "forearm")),
                          r"link 'forearm' <inertial>: the spatial inertia overflows: mass "
                          r"1e\+300 with its centre of mass at 100000 from the link origin"),
    "welded inertia overflows": (robot(link("a"), link("b", mass=1.0), link("c", mass=1e300),
                                       joint("j", "revolute", "a", "b"),
                                       joint("w", "fixed", "b", "c", xyz="1e5 0 0")),
                                 r"link 'b' with the links welded to it \('c'\), <inertial> "
                                 r"summed: spatial inertia contains NaN or inf"),
    "inertia not PSD": (robot(link("a"), link("forearm", mass=1, inertia=(1, 0, 0, 1, 0, -0.5)),
                              joint("j", "revolute", "a", "forearm")),
                        "link 'forearm', <inertial> summed: .*not positive semi-definite"),
    "triangle inequality": (robot(link("a"),
                                  link("forearm", mass=1, inertia=(0.1, 0, 0, 0.1, 0, 1)),
                                  joint("j", "revolute", "a", "forearm")),
                            "link 'forearm', <inertial> summed: .*triangle inequality"),
    "reserved name base": (robot(AB, joint("base", "revolute", "a", "b")),
                           "joint 'base': the name is reserved"),
}


@pytest.mark.parametrize("doc, match", BAD.values(), ids=BAD.keys())
def test_bad_input_raises_urdf_error_naming_the_element(doc, match):
    with pytest.raises(URDFError, match=match):
        urdf.loads(doc)


def test_a_huge_but_finite_mass_loads_and_runs():
    """A mass of 1e300 with its COM off the link origin ended in 'Eigenvalues did not
    converge' (the inertia check formed (m c)², which overflowed). What is refused is a
    spatial inertia that is not finite (see BAD: "inertia overflows"); this one is."""
    for floating in (False, True):
        m = urdf.loads(robot(link("a"), link("b", mass=1e300, xyz="0.1 0.2 0.3"),
                             joint("j", "revolute", "a", "b", xyz="1 0 0", axis="0 0 1")),
                       floating_base=floating)
        q = rbd.neutral_q(m)
        assert np.all(np.isfinite(rbd.rnea(m, q, np.ones(m.nv), np.ones(m.nv))))
        assert m.I[m.N][5, 5] == 1e300


@pytest.mark.parametrize("flag", ["floating_base", "physical"])
@pytest.mark.parametrize("bad", ["false", 0, 1, None])
def test_flags_must_be_bools(flag, bad, tmp_path):
    """floating_base="false" (a string, so true) built a floating base."""
    doc = robot(AB, joint("j", "revolute", "a", "b"))
    with pytest.raises(TypeError, match=rf"{flag} must be True or False, got {bad!r}"):
        urdf.loads(doc, **{flag: bad})
    path = tmp_path / "r.urdf"
    path.write_text(doc)
    with pytest.raises(ValueError, match=rf"{flag} must be True or False"):
        urdf.load(path, **{flag: bad})


def test_placeholder_inertias_are_judged_as_part_of_their_body():
    """A welded link may carry an unphysical placeholder (as sensor frames do in published
    URDFs): what is checked is the rigid body it belongs to. The root's inertia counts only
    where the root moves (floating base)."""
    placeholder = link("camera", mass=0.01, inertia=(1e-6, 0, 0, 1e-6, 0, 1e-4))   # I1+I2 < I3
    doc = robot(link("a", mass=1, inertia=(1, 2, 0, 1, 0, 1)),          # the root: not PSD
                link("forearm", mass=1.0), placeholder,
                joint("j", "revolute", "a", "forearm"), joint("weld", "fixed", "forearm", "camera"))
    m = urdf.loads(doc)
    assert m.N == 1 and m.I[1][5, 5] == pytest.approx(1.01)     # the camera's mass is welded on
    with pytest.raises(URDFError, match=r"link 'a', <inertial> summed: .*not positive semi"):
        urdf.loads(doc, floating_base=True)
    heavy = robot(link("a"), link("forearm", mass=0.001, inertia=(1e-9, 0, 0, 1e-9, 0, 1e-9)),
                  link("camera", mass=1.0, inertia=(1e-3, 0, 0, 1e-3, 0, 0.1)),
                  joint("j", "revolute", "a", "forearm"), joint("weld", "fixed", "forearm", "camera"))
    with pytest.raises(URDFError, match=r"link 'forearm' with the links welded to it "
                                        r"\('camera'\), <inertial> summed: .*triangle"):
        urdf.loads(heavy)


def test_names_reserved_in_floating_mode():
    doc = robot(link("a"), link("b"), joint("root_joint", "revolute", "a", "b"))
    assert urdf.loads(doc).names == ["base", "root_joint"]
    with pytest.raises(URDFError, match="joint 'root_joint': the name is reserved"):
        urdf.loads(doc, floating_base=True)
    doc = robot(link("universe"), link("b"), joint("j", "revolute", "universe", "b"))
    assert urdf.loads(doc).body_names == ["universe", "b"]
    with pytest.raises(URDFError, match="link 'universe': the name is reserved"):
        urdf.loads(doc, floating_base=True)


def test_urdf_error_is_a_value_error():
    assert issubclass(URDFError, ValueError)


# --- cross-check against Pinocchio's URDF parser ------------------------------------------

ROBOTS = [
    "ur_description/urdf/ur5_robot.urdf",
    "panda_description/urdf/panda.urdf",                                # prismatic fingers, mimic
    "talos_data/robots/talos_reduced.urdf",                             # 32 joints, many welds
    "solo_description/robots/solo12.urdf",                              # quadruped
    "a1_description/urdf/a1.urdf",                                      # quadruped
    "double_pendulum_description/urdf/double_pendulum_continuous.urdf",  # continuous
    "kinova_description/robots/kinova.urdf",                            # continuous
    "icub_description/robots/icub_reduced.urdf",
    "romeo_description/urdf/romeo.urdf",                                # 55 joints
]


def pin_frame(pm, name):
    return pm.getFrameId(name, pin.FrameType.BODY)


@pytest.mark.parametrize("floating", [False, True], ids=["fixed", "floating"])
@pytest.mark.parametrize("relpath", ROBOTS, ids=[r.split("/")[-1] for r in ROBOTS])
def test_matches_pinocchio(relpath, floating):
    path = urdf.example_robot_path(relpath)
    m = urdf.load(path, floating_base=floating, mimic=False)
    pm = (pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating
          else pin.buildModelFromUrdf(path))
    pd = pm.createData()
    # the same joints, in the same order
    assert m.names[1:] == list(pm.names)[1:]
    assert m.nv == pm.nv
    assert_close(m.gravity, to_angular_linear(pm.gravity.vector))
    assert sum(I[5, 5] for I in m.I[1:]) == pytest.approx(pin.computeTotalMass(pm), rel=REL)
    for i in range(1, m.N + 1):
        jid = pm.getJointId(m.names[i])
        assert_close(m.I[i], to_angular_linear(pm.inertias[jid].matrix(), operator=True))
        assert_close(interop.se3_from_X(m.Xtree[i]).homogeneous,
                     pm.jointPlacements[jid].homogeneous)

    rng = np.random.default_rng(zlib.crc32(relpath.encode()))
    q = rbd.random_q(m, rng)
    v, a = rng.normal(size=m.nv), rng.normal(size=m.nv)
    qp, vp, ap = interop.q_to_pin(m, pm, q), interop.v_to_pin(m, pm, v), interop.v_to_pin(m, pm, a)
    assert_close(interop.q_from_pin(m, pm, qp), q)

    # forward kinematics of every body
    pin.framesForwardKinematics(pm, pd, qp)
    X0 = rbd.forward_kinematics(m, q)
    for i in range(1, m.N + 1):
        R, p = rbd.body_pose(X0[i])
        M = pd.oMf[pin_frame(pm, m.body_names[i])]
        assert_close(R, M.rotation)
        assert_close(p, M.translation)

    # inverse dynamics, with gravity
    assert_close(rbd.rnea(m, q, v, a), interop.v_from_pin(m, pm, pin.rnea(pm, pd, qp, vp, ap)))
    assert_close(rbd.rnea(m, q, 0 * v, 0 * a),
                 interop.v_from_pin(m, pm, pin.computeGeneralizedGravity(pm, pd, qp)))

    # Jacobians of every body, local and world; Pinocchio's rows are [linear; angular]
    # and its columns follow its velocity layout
    pin.computeJointJacobians(pm, pd, qp)
    pin.updateFramePlacements(pm, pd)
    for i in range(1, m.N + 1):
        fid = pin_frame(pm, m.body_names[i])
        for frame, ref in (("local", pin.LOCAL), ("world", pin.WORLD)):
            Jp = to_angular_linear(pin.getFrameJacobian(pm, pd, fid, ref))
            Jp = np.array([interop.v_from_pin(m, pm, row) for row in Jp])
            assert_close(rbd.jacobian(m, q, i, frame=frame), Jp)


# --- every robot of example-robot-data ----------------------------------------------------

def _all_robot_files():
    import pathlib
    try:
        root = pathlib.Path(urdf.example_robot_path("ur_description/urdf/ur5_robot.urdf"))
    except FileNotFoundError:
        return []
    robots = root.parents[2]
    return sorted(str(p.relative_to(robots)) for p in robots.rglob("*.urdf"))


ALL_ROBOTS = _all_robot_files()
# Bodies that are not physically realisable even with everything welded to them: loaded
# only with physical=False (Pinocchio loads them without a check)
UNPHYSICAL = {
    "romeo_description/urdf/romeo_small.urdf": "link 'RShoulderYawLink'.*triangle inequality",
    "romeo_description/urdf/romeo_laas_small.urdf": "not positive semi-definite",
}
# An empty placeholder file, which Pinocchio refuses too
REFUSED = {"ur_description/urdf/ur3.urdf": "URDF has no <link>"}


def test_the_robots_are_discovered():
    assert len(ALL_ROBOTS) >= 60 and set(REFUSED) | set(UNPHYSICAL) <= set(ALL_ROBOTS)


@pytest.mark.parametrize("floating", [False, True], ids=["fixed", "floating"])
@pytest.mark.parametrize("relpath", ALL_ROBOTS, ids=[r.replace("/", ":") for r in ALL_ROBOTS])
def test_every_robot_loads_and_matches_pinocchio(relpath, floating):
    """Discovered from the installed package: each URDF loads (placeholder inertias of
    welded links included) and its body poses, RNEA, CRBA and ABA are Pinocchio's."""
    path = urdf.example_robot_path(relpath)
    if relpath in REFUSED:
        with pytest.raises(URDFError, match=REFUSED[relpath]):
            urdf.load(path, floating_base=floating)
        with pytest.raises(ValueError, match="does not contain a valid URDF model"):
            pin.buildModelFromUrdf(path)
        return
    physical = relpath not in UNPHYSICAL
    if not physical:
        with pytest.raises(URDFError, match=UNPHYSICAL[relpath] + r".*physical=False accepts"):
            urdf.load(path, floating_base=floating)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m = urdf.load(path, floating_base=floating, mimic=False, physical=physical)  # as Pinocchio
    # a <mimic> naming no joint is read as independent, as Pinocchio's plain parser reads it
    said = [str(w.message) for w in caught]
    assert len(said) == (relpath in BROKEN_MIMIC), said
    if said:
        assert said[0].startswith(BROKEN_MIMIC[relpath]) and said[0].endswith(
            "the <mimic> names no joint of the URDF, so these joints are read as independent")
    pm = (pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating
          else pin.buildModelFromUrdf(path))
    pd = pm.createData()
    assert m.names[1:] == list(pm.names)[1:] and m.nv == pm.nv
    rng = np.random.default_rng(zlib.crc32(relpath.encode()))
    q, v, a = rbd.random_q(m, rng), rng.normal(size=m.nv), rng.normal(size=m.nv)
    qp, vp, ap = interop.q_to_pin(m, pm, q), interop.v_to_pin(m, pm, v), interop.v_to_pin(m, pm, a)
    pin.framesForwardKinematics(pm, pd, qp)
    X0 = rbd.forward_kinematics(m, q)
    for i in range(1, m.N + 1):                      # the pose of every body
        M, (R, p) = pd.oMf[pin_frame(pm, m.body_names[i])], rbd.body_pose(X0[i])
        np.testing.assert_allclose(R, M.rotation, atol=1e-12)
        np.testing.assert_allclose(p, M.translation, atol=1e-12 * (1 + np.abs(p).max()))
    scale = 1.0 + np.abs(pin.rnea(pm, pd, qp, vp, ap)).max(initial=0.0)
    np.testing.assert_allclose(rbd.rnea(m, q, v, a),
                               interop.v_from_pin(m, pm, pin.rnea(pm, pd, qp, vp, ap)),
                               atol=1e-10 * scale)
    H = rbd.crba(m, q)
    np.testing.assert_allclose(H, interop.H_from_pin(m, pm, pin.crba(pm, pd, qp)),
                               atol=1e-10 * (1.0 + np.abs(H).max(initial=0.0)))
    tau = rng.normal(size=m.nv)
    qdd_pin = pin.aba(pm, pd, qp, vp, interop.v_to_pin(m, pm, tau))
    if not np.all(np.isfinite(qdd_pin)):            # Pinocchio: NaN; rbdlearn: a named error
        with pytest.raises(SingularArticulatedInertia):
            rbd.aba(m, q, v, tau)
        with pytest.raises(ValueError, match=r"vp\[\d+\] is nan"):   # not converted either
            interop.v_from_pin(m, pm, qdd_pin)
        return
    qdd_pin = interop.v_from_pin(m, pm, qdd_pin)
    qdd = rbd.aba(m, q, v, tau)
    # ABA's error grows with cond(H) (icub reaches 1e10): compare through H, the residual
    big = 1.0 + np.abs(tau).max(initial=0.0) + np.abs(H @ qdd_pin).max(initial=0.0)
    np.testing.assert_allclose(H @ qdd, H @ qdd_pin, atol=1e-8 * big)


# --- mimic joints: the gear coupling of chapter 2 -----------------------------------------

def mimic(name, driver, multiplier=None, offset=None):
    """A revolute joint ``name`` of link ``name`` on link "a" that mimics ``driver``."""
    attrs = "".join(f' {k}="{v}"' for k, v in (("multiplier", multiplier), ("offset", offset))
                    if v is not None)
    return joint(name, "revolute", "a", name, axis="0 0 1").replace(
        "</joint>", f'<mimic joint="{driver}"{attrs}/></joint>')


MIMIC_DOC = robot(link("a"), *(link(n, mass=1.0) for n in ("j1", "j2", "j3", "w")),
                  joint("j1", "revolute", "a", "j1", axis="0 0 1"),
                  mimic("j2", "j1", multiplier=-0.5, offset=0.2), mimic("j3", "j1"),
                  joint("weld", "fixed", "j1", "w").replace(
                      "</joint>", '<mimic joint="j1"/></joint>'))


def test_mimic_joints_become_gears():
    model, gears = urdf.loads(MIMIC_DOC, mimic=True)
    assert gears == [rbd.Gear("j2", "j1", -0.5, 0.2), rbd.Gear("j3", "j1", 1.0, 0.0)]
    assert rbd.gear_matrix(model, gears).shape == (3, 1)           # one independent velocity
    assert np.array_equal(rbd.geared_q(model, gears, [0.4]), [0.4, -0.5 * 0.4 + 0.2, 0.4])
    assert urdf.loads(MIMIC_DOC, mimic=False).nv == 3              # independent, silently
    with pytest.warns(UserWarning, match="URDF joints 'j2', 'j3' mimic other joints; they "
                                         "are read as independent joints .nv = 3.*mimic=True"):
        assert urdf.loads(MIMIC_DOC).nv == 3


def test_bad_mimic():
    doc = robot(link("a"), link("j2"), mimic("j2", "nope"))
    with pytest.raises(URDFError, match="joint 'j2': <mimic joint='nope'> names no joint"):
        urdf.loads(doc, mimic=True)
    for how in (None, False):          # read as independent, with a warning naming both
        with pytest.warns(UserWarning, match="joint 'j2': <mimic joint='nope'>: the <mimic> "
                          "names no joint of the URDF, so this joint is read as independent"):
            assert urdf.loads(doc, mimic=how).nv == 1
    doc = robot(link("a"), link("b"), link("j2"), joint("weld", "fixed", "a", "b"),
                mimic("j2", "weld"))
    assert urdf.loads(doc, mimic=False).nv == 1
    with pytest.raises(URDFError, match="joint 'j2' mimics 'weld', a fixed joint"):
        urdf.loads(doc, mimic=True)
    with pytest.raises(URDFError, match="joint 'j2': <mimic multiplier='x'> needs 1 finite"):
        urdf.loads(robot(link("a"), link("j2"), mimic("j2", "j2", multiplier="x")))
    with pytest.raises(ValueError, match="mimic must be None, True or False, got 'yes'"):
        urdf.loads(MIMIC_DOC, mimic="yes")


MIMIC_ROBOTS = [r for r in ALL_ROBOTS if r not in REFUSED and r not in UNPHYSICAL
                and "<mimic" in open(urdf.example_robot_path(r)).read()]
# A URDF whose <mimic> names a joint it does not have (Pinocchio refuses it too)
BROKEN_MIMIC = {"alex_description/urdf/alex_psyonic_hands.urdf":
                "joint 'Left_index_q2': <mimic joint='index_q1'>"}


def _pin_reduced(pm, pmm):
    """E (pm.nv x pmm.nv) putting the velocities of Pinocchio's mimic model ``pmm`` into
    those of its plain model ``pm`` (zero at mimic joints), and the q of ``pmm`` from
    that of ``pm``."""
    E, qsel = np.zeros((pm.nv, pmm.nv)), []
    for k in range(1, pmm.njoints):
        jm, j = pmm.joints[k], pm.joints[pm.getJointId(pmm.names[k])]
        if jm.nv:                                     # a mimic joint has nq = nv = 0 here
            E[j.idx_v:j.idx_v + j.nv, jm.idx_v:jm.idx_v + jm.nv] = np.eye(j.nv)
            qsel += range(j.idx_q, j.idx_q + j.nq)
    return E, qsel


def test_mimic_robots_are_discovered():
    assert {"panda_description/urdf/panda.urdf", "pr2_description/urdf/pr2.urdf",
            *BROKEN_MIMIC} <= set(MIMIC_ROBOTS)


@pytest.mark.parametrize("floating", [False, True], ids=["fixed", "floating"])
@pytest.mark.parametrize("relpath", MIMIC_ROBOTS, ids=[r.replace("/", ":") for r in MIMIC_ROBOTS])
def test_mimic_robots_match_pinocchio_with_mimic(relpath, floating):
    """q̇ = G q̇_ind: Gᵀ H G and Gᵀ rnea(q, G q̇_ind, G q̈_ind) are the CRBA and RNEA of
    Pinocchio's model with mimic joints, whose nv is the number of independent
    velocities. Pinocchio refuses some (a mimic joint placed before its driver)."""
    path = urdf.example_robot_path(relpath)
    if relpath in BROKEN_MIMIC:
        with pytest.raises(URDFError, match=BROKEN_MIMIC[relpath]):
            urdf.load(path, floating_base=floating, mimic=True)
        return
    m, gears = urdf.load(path, floating_base=floating, mimic=True)
    G = rbd.gear_matrix(m, gears)
    root = [pin.JointModelFreeFlyer()] if floating else []
    try:
        pmm = pin.buildModelFromUrdf(path, *root, mimic=True)
    except ValueError as e:                          # see the docstring
        assert "mimic" in str(e)
        assert G.shape == (m.nv, m.nv - len(gears))
        return
    pm = pin.buildModelFromUrdf(path, *root)
    assert G.shape == (m.nv, pmm.nv)
    E, qsel = _pin_reduced(pm, pmm)
    rng = np.random.default_rng(zlib.crc32(relpath.encode()))
    driven = {m.names.index(g.driven) for g in gears}
    free = [i for i in range(1, m.N + 1) if i not in driven]
    q_ind = np.concatenate([rbd.random_q(m, rng)[m.q_slices[i]] for i in free])
    ind = np.concatenate([np.arange(m.nv)[m.v_slices[i]] for i in free])
    q = rbd.geared_q(m, gears, q_ind)
    v_ind, a_ind = rng.normal(size=G.shape[1]), rng.normal(size=G.shape[1])
    qp = interop.q_to_pin(m, pm, q)[qsel]

    def to_rbd(x_pin):                               # reduced Pinocchio → reduced rbdlearn
        return interop.v_from_pin(m, pm, E @ x_pin)[ind]

    def to_pin(x_ind):
        return E.T @ interop.v_to_pin(m, pm, G @ x_ind)

    assert_close(to_rbd(to_pin(v_ind)), v_ind)       # the maps are consistent
    pd = pmm.createData()
    tau_p = pin.rnea(pmm, pd, qp, to_pin(v_ind), to_pin(a_ind))
    tau = G.T @ rbd.rnea(m, q, G @ v_ind, G @ a_ind)
    assert_close(tau, to_rbd(tau_p))
    H_ind = G.T @ rbd.crba(m, q) @ G
    assert_close(H_ind, interop.H_from_pin(m, pm, E @ pin.crba(pmm, pd, qp) @ E.T)[np.ix_(ind, ind)])
