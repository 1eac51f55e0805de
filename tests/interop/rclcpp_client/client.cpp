// An rclcpp client of gpu_planning's own types: calls /nearest_neighbors/knn and reads the
// latched /cell_graph/cell_graph, printing what it got in the forms scripts/ros2-tools-check
// compares with the CPU references.
//
// Usage: rclcpp_client K X0 Y0 Z0 [X1 Y1 Z1 ...]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gpu_planning_msgs/msg/cell_graph.hpp"
#include "gpu_planning_msgs/srv/k_nearest.hpp"
#include "rclcpp/rclcpp.hpp"

using namespace std::chrono_literals;

int main(int argc, char ** argv)
{
  rclcpp::init(argc, argv);
  const auto args = rclcpp::remove_ros_arguments(argc, argv);
  if (args.size() < 5 || (args.size() - 2) % 3 != 0) {
    std::fprintf(stderr, "usage: rclcpp_client K X0 Y0 Z0 [X1 Y1 Z1 ...]\n");
    return 2;
  }
  auto node = rclcpp::Node::make_shared("rclcpp_client");
  int status = 0;

  auto knn = node->create_client<gpu_planning_msgs::srv::KNearest>("/nearest_neighbors/knn");
  if (!knn->wait_for_service(20s)) {
    std::fprintf(stderr, "no /nearest_neighbors/knn within 20 s\n");
    return 1;
  }
  auto req = std::make_shared<gpu_planning_msgs::srv::KNearest::Request>();
  req->dimensions = 3;
  req->k = static_cast<uint32_t>(std::atoi(args[1].c_str()));
  for (size_t i = 2; i < args.size(); ++i) {
    req->points.push_back(std::strtof(args[i].c_str(), nullptr));
  }
  auto future = knn->async_send_request(req);
  if (rclcpp::spin_until_future_complete(node, future, 20s) != rclcpp::FutureReturnCode::SUCCESS) {
    std::fprintf(stderr, "no knn response within 20 s\n");
    return 1;
  }
  const auto r = future.get();
  if (!r->success) {
    std::fprintf(stderr, "knn refused: %s\n", r->error.c_str());
    status = 1;
  }
  // As Python prints a list of lists: [[0, 4, 1], [3, 4, 2]].
  std::string rows = "[";
  for (size_t q = 0; q + 1 < r->neighbors.offsets.size(); ++q) {
    rows += q ? ", [" : "[";
    for (uint32_t j = r->neighbors.offsets[q]; j < r->neighbors.offsets[q + 1]; ++j) {
      rows += (j > r->neighbors.offsets[q] ? ", " : "") + std::to_string(r->neighbors.indices[j]);
    }
    rows += "]";
  }
  std::printf("knn: %s]\n", rows.c_str());

  // The graph the node holds, latched as map_server's map is.
  bool got = false;
  auto qos = rclcpp::QoS(1).reliable().transient_local();
  auto sub = node->create_subscription<gpu_planning_msgs::msg::CellGraph>(
    "/cell_graph/cell_graph", qos, [&got](const gpu_planning_msgs::msg::CellGraph & g) {
      std::printf(
        "cell_graph: %zu cells, %zu edges (constraints %u)\n", g.sample_counts.size(),
        g.edge_from.size(), g.constraint_count);
      got = true;
    });
  const auto until = std::chrono::steady_clock::now() + 20s;
  while (!got && rclcpp::ok() && std::chrono::steady_clock::now() < until) {
    rclcpp::spin_some(node);
    std::this_thread::sleep_for(50ms);
  }
  if (!got) {
    std::fprintf(stderr, "no /cell_graph/cell_graph within 20 s\n");
    status = 1;
  }
  rclcpp::shutdown();
  return status;
}
