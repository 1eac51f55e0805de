"""Starts the polyline node alone. Angle-limited polyline DP: ~/image in, ~/polyline, ~/extract.

    ros2 launch gpu_planning polyline.launch.py namespace:=robot1 backend:=cuda
"""
import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node


def generate_launch_description():
    default_params = os.path.join(get_package_share_directory("gpu_planning"), "config", "default.yaml")
    return LaunchDescription([
        DeclareLaunchArgument("namespace", default_value="", description="namespace of the node"),
        DeclareLaunchArgument("params_file", default_value=default_params, description="ROS 2 parameter file"),
        DeclareLaunchArgument("backend", default_value="auto", description="auto, cpu or cuda"),
        DeclareLaunchArgument("use_sim_time", default_value="false", description="use /clock"),
        Node(
            package="gpu_planning",
            executable="gpu_planning",
            namespace=LaunchConfiguration("namespace"),
            arguments=["run", "--nodes", "polyline"],
            parameters=[
                LaunchConfiguration("params_file"),
                {"backend": LaunchConfiguration("backend"), "use_sim_time": LaunchConfiguration("use_sim_time")},
            ],
            output="screen",
            emulate_tty=True,
        ),
    ])
